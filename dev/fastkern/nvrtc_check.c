/* nvrtc_check: compile a CUDA source with whatever NVRTC it is pointed at
 * (default: Debian's NVRTC 11.8, the oldest the app supports) for one arch,
 * to prove the kernel sources need no toolkit headers. Build and run here:
 *   cc -O1 -o bin/nvrtc_check dev/fastkern/nvrtc_check.c -ldl
 *   bin/nvrtc_check kernels/cuda/fast_group_gemm.cu sm_90 [-DNAME=VALUE ...]
 * Exit status 0 only when the compile succeeds; the NVRTC log is printed. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int (*create_fn)(void **, const char *, const char *, int, const char *const *, const char *const *);
typedef int (*compile_fn)(void *, int, const char *const *);
typedef int (*logsize_fn)(void *, size_t *);
typedef int (*log_fn)(void *, char *);
typedef int (*version_fn)(int *, int *);

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s file.cu sm_XX [-Dopt ...]\n", argv[0]);
    return 2;
  }
  const char *lib = getenv("NVRTC_LIB");
  if (!lib) lib = "/usr/lib/x86_64-linux-gnu/libnvrtc.so.11.2";
  void *h = dlopen(lib, RTLD_NOW);
  if (!h) {
    fprintf(stderr, "nvrtc_check: dlopen %s: %s\n", lib, dlerror());
    return 2;
  }
  create_fn create = (create_fn)dlsym(h, "nvrtcCreateProgram");
  compile_fn compile = (compile_fn)dlsym(h, "nvrtcCompileProgram");
  logsize_fn logsize = (logsize_fn)dlsym(h, "nvrtcGetProgramLogSize");
  log_fn getlog = (log_fn)dlsym(h, "nvrtcGetProgramLog");
  version_fn version = (version_fn)dlsym(h, "nvrtcVersion");
  if (!create || !compile || !logsize || !getlog || !version) {
    fprintf(stderr, "nvrtc_check: missing NVRTC symbols in %s\n", lib);
    return 2;
  }
  FILE *f = fopen(argv[1], "rb");
  if (!f) {
    perror("nvrtc_check: open source");
    return 2;
  }
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *src = malloc(n + 1);
  if (fread(src, 1, n, f) != (size_t)n) {
    fprintf(stderr, "nvrtc_check: short read of %s\n", argv[1]);
    return 2;
  }
  src[n] = 0;
  fclose(f);
  int maj = 0, min = 0;
  version(&maj, &min);
  char arch[64];
  snprintf(arch, sizeof arch, "--gpu-architecture=%s", argv[2]);
  const char *opts[64];
  int no = 0;
  opts[no++] = arch;
  opts[no++] = "-std=c++17";
  for (int i = 3; i < argc && no < 60; i++) opts[no++] = argv[i];
  void *prog = NULL;
  int rc = create(&prog, src, argv[1], 0, NULL, NULL);
  if (rc) {
    fprintf(stderr, "nvrtc_check: create program: error %d\n", rc);
    return 2;
  }
  rc = compile(prog, no, opts);
  size_t ls = 0;
  logsize(prog, &ls);
  char *logbuf = malloc(ls + 1);
  getlog(prog, logbuf);
  printf("NVRTC %d.%d %s %s: %s\n%s", maj, min, argv[1], argv[2], rc ? "FAILED" : "ok", logbuf);
  return rc ? 1 : 0;
}
