#!/usr/bin/env bash
# Device calls of issue 11's wgmma dual GEMM and stream-K schedule. From the
# repository root on the GPU machine, with bin/ carried (bin/web,
# bin/engine.test, built here):
#   bash dev/gpucall/dual.sh dual [TOTAL]     # the dual GEMM's first call
#   bash dev/gpucall/dual.sh streamk [TOTAL]  # schedule=streamk, both problems
#   bash dev/gpucall/dual.sh auto [TOTAL]     # schedule=auto, the family test, the same call's peers
#   bash dev/gpucall/dual.sh grid [TOTAL]     # stream-K on every SM (work-item grid), auto again
#   bash dev/gpucall/dual.sh regs [TOTAL]     # setmaxnreg builds (ptxas only), ncu stalls per SASS line
#   bash dev/gpucall/dual.sh split [TOTAL]    # registers=split: 256-row group and 128-column dual tiles
#   bash dev/gpucall/dual.sh splitcheck [TOTAL] # the family test over every combination; group split vs baseline
#   bash dev/gpucall/dual.sh chunks [TOTAL]   # pipeline=chunks: resources, tests, paired benches
#   bash dev/gpucall/dual.sh pipes [TOTAL]    # ncu: pipe utilization of the group kernel on bench1
#   bash dev/gpucall/dual.sh prmt [TOTAL]     # decode=prmt: resources, instruction mix, tests, paired benches
#   bash dev/gpucall/dual.sh prmtcheck [TOTAL] # decode=prmt against the baseline, paired, and the peers
#   bash dev/gpucall/dual.sh prmtfamily [TOTAL] # the family test, the best variants' resources
#   bash dev/gpucall/dual.sh profprmt [TOTAL]  # ncu: the best dual variant with each decode, bench2
#   bash dev/gpucall/dual.sh tileauto [TOTAL]  # the dual GEMM's tile_n=auto: tests, benches, its family test
#   bash dev/gpucall/dual.sh gtileauto [TOTAL] # the same for the group GEMM
#   bash dev/gpucall/dual.sh tokens [TOTAL]    # tokens=once: tests and paired benches, both problems, resources, peers
#   bash dev/gpucall/dual.sh tokensrung [TOTAL] # tokens=once against the baseline, both problems; step 13's experiments
#   bash dev/gpucall/dual.sh fit256 [TOTAL]    # tile_n=auto with tail_width=fit (group), tile_m=256 (dual)
#   bash dev/gpucall/dual.sh proftok [TOTAL]   # ncu: the tokens=once variants, L2 and stalls; then the family test
#   bash dev/gpucall/dual.sh final [TOTAL]     # the best variants against the baseline, peers, resources, the dual family test
#   bash dev/gpucall/dual.sh pdl [TOTAL]       # overlap=pdl and consumers=3 (group): resources, tests, paired with the best
#   bash dev/gpucall/dual.sh pdl2 [TOTAL]      # overlap=pdl (dual); the two group steps combined under tile_n=auto; peers
#   bash dev/gpucall/dual.sh final2 [TOTAL]    # steps 15-16's rungs against the baseline; the group family test
#   bash dev/gpucall/dual.sh prof3 [TOTAL]     # issue 13's overload on pinned cores; ncu of the 192-row tile; the dual family test
#   bash dev/gpucall/dual.sh final3 [TOTAL]    # the best variants against the baseline with the timing gate; peers
#   bash dev/gpucall/dual.sh fit3 [TOTAL]      # tail_width=fit on three consumers (group): resources, tests, paired with the best
#   bash dev/gpucall/dual.sh fit64 [TOTAL]     # tail_width=fit64 (two widths): resources; if ptxas keeps the wgmmas pipelined, tests and paired with the best
#   bash dev/gpucall/dual.sh fit64b [TOTAL]    # fit64 under stream-K against whole tiles; the fit64 rung and the dual best against the baseline; peers
#   bash dev/gpucall/dual.sh fit64check [TOTAL] # the best variants' resources (TestBestVariantResources), then the group half of the family test
#   bash dev/gpucall/dual.sh hybrid [TOTAL]     # schedule=hybrid (stream-K over the last wave only): resources, tests, paired with the best
#   bash dev/gpucall/dual.sh hybrid2 [TOTAL]    # schedule=autohybrid: the group rung against the baseline, the dual best, peers; the dual family test
#   bash dev/gpucall/dual.sh hybrid3 [TOTAL]    # the best variants' resources, the group family test
#   bash dev/gpucall/dual.sh hybrid4 [TOTAL]    # the group family test from combination SKIP on (PITCHTANK_FAMILY_SKIP)
#   bash dev/gpucall/dual.sh hybrid5 [TOTAL]    # after the hybrid fix: the rest of the group family test, the rung against the baseline, the dual family test
#   bash dev/gpucall/dual.sh tm64 [TOTAL]       # 64-token tiles against the best variants, per shape (both problems); ncu of the dual best on bench2
#   bash dev/gpucall/dual.sh pf [TOTAL]         # prefetch=next: resources, tests, paired with the best (both problems), its family combinations
#   bash dev/gpucall/dual.sh pf2 [TOTAL]        # bench --ungated (device test); ncu of the dual best on bench2; SASS with and without WG_PF; the prefetch rung against the baseline
#   bash dev/gpucall/dual.sh pf3 [TOTAL]        # the prefetch rungs of both problems against the baseline (pf2's was cut by its max-time on a cold cache)
#   bash dev/gpucall/dual.sh verify [TOTAL]     # the device tests' hang watchdog; the group family test (SKIP=N resumes it, then the dual half)
#   bash dev/gpucall/dual.sh ready [TOTAL]      # overlap=ready: resources, tests, paired with the best (both problems), its family combinations
#   bash dev/gpucall/dual.sh timeline [TOTAL]   # ncu: the token decode's and the GEMM's own durations on the short shapes (group bench3-4, dual bench3) and bench1
#   bash dev/gpucall/dual.sh fold [TOTAL]       # consumers=4 (dual, no producer warpgroup): resources, tests, paired with the two-consumer wide tile and the best, its family combinations
#   bash dev/gpucall/dual.sh foldprof [TOTAL] [four|wide] # ncu: consumers=4 (or two folded consumers) and the two-consumer wide tile on bench2 (whole tiles, one launch each)
#   bash dev/gpucall/dual.sh fold2 [TOTAL]      # producer=folded on two dual consumers against a producer warpgroup (both tiles, whole tiles), its family combinations
#   bash dev/gpucall/dual.sh fold3 [TOTAL]      # the same with the release counted per stage (the last consumer refills it), and four consumers
#   bash dev/gpucall/dual.sh foldsrc [TOTAL]    # ncu source counters (stall samples per SASS line): the narrow tile folded and with a producer warpgroup, bench2
#   bash dev/gpucall/dual.sh foldcursor [TOTAL] # the cursor kept: resources, the folded family combinations, paired with a producer warpgroup
#   bash dev/gpucall/dual.sh chunkmarks [TOTAL] # consumer 0's way through each chunk (WG_STAMP marks): dual W, N, four consumers; the group's three-consumer tile
#   bash dev/gpucall/dual.sh chunkmarks3 [TOTAL] # the same with only consumer 0 issuing wgmmas (WG_EXP=16, stamps of launches 0 and 2), the SM clock and every block's span
#   bash dev/gpucall/dual.sh wgprobe [TOTAL]     # dev/wgprobe: a warpgroup's wgmma issue time, RS or SS, 1-4 warpgroups, ALU between wgmmas, widths 64-256
#   bash dev/gpucall/dual.sh instmix [TOTAL]     # ncu: instructions executed per SASS line, the best variants (dual bench2, group bench1); the probe's SASS
#   bash dev/gpucall/dual.sh ssa [TOTAL]         # weights=shared: ptxas, the probe's OWN form, tests, paired with register weights and the best variant (dual, group), its family combinations
#   bash dev/gpucall/dual.sh staged [TOTAL]      # weights=staged: ptxas, tests, paired with register weights and the best (both problems), its family combinations
#   bash dev/gpucall/dual.sh issueq [TOTAL]      # dev/wgprobe issue: when each of a chain's eight wgmma issues returns (RS, SS; one and two warpgroups; empty pipe, or the previous chain in flight with and without the fence)
#   bash dev/gpucall/dual.sh stagedmarks [TOTAL] # WG_STAMP marks of weights=staged and of the same tile with register weights, bench2
#   bash dev/gpucall/dual.sh ssaprof [TOTAL]     # ncu: weights=shared and register weights, dual narrow tile, bench2
#   bash dev/gpucall/dual.sh overlap [TOTAL]     # both consumers' WG_STAMP marks: the cycles per chunk in which both, one or neither issues (W, N, the group's tile)
#   bash dev/gpucall/dual.sh pp [TOTAL]          # WG_PP (the dual consumers take turns issuing halves): tests, W and N against the baseline in both builds, stamps
#   [ABL=...] bash dev/gpucall/dual.sh ablate [TOTAL] # WG_STAMP builds with WG_EXP 2, 4, 8 (no decode, no wgmma, wgmmas alone; ABL names others): whole-launch clocks, dual W and N, group three consumers
#   bash dev/gpucall/dual.sh pw2 [TOTAL]         # the same with one release per warp: ptxas, tests, paired with the best, marks of the dual wide and group three-consumer tiles
#   bash dev/gpucall/dual.sh pw3 [TOTAL]         # the same with the producer's copies coalesced: ptxas, tests, paired with the best, its family combinations
#   bash dev/gpucall/dual.sh pwg2 [TOTAL]        # prefetch=producer on the group's two-consumer tiles, paired with the group's best; the peers
#   bash dev/gpucall/dual.sh pwg3 [TOTAL]        # the same on three group consumers at 152 registers (the producer 56): ptxas, tests, paired with the best
#   bash dev/gpucall/dual.sh ablmarks [TOTAL]    # both dual consumers' WG_STAMP marks (narrow tile, bench2) in the full build and with WG_EXP 2, 8, 32
#   bash dev/gpucall/dual.sh epi [TOTAL]         # epilogue=split (WG_EPI): ptxas, tests, paired with the best; in the WG_RCP build (fast reciprocal in both) the split alone; peers; its family combinations
#   bash dev/gpucall/dual.sh epi2 [TOTAL]        # epilogue=split against the baseline (the rung); the dual best with it paired with prefetch=producer, autohybrid and four folded consumers
#   bash dev/gpucall/dual.sh epi3 [TOTAL]        # the dual best (E) against other tiles and schedules with epilogue=split: narrow autohybrid, narrow stream-K, 256-token tiles
#   bash dev/gpucall/dual.sh g3sk [TOTAL]        # the group's three-consumer tile under autohybrid on every shape (stream-K on bench3-4) paired with the group best; the same tile with prefetch=producer
#   bash dev/gpucall/dual.sh profepi [TOTAL]     # ncu: the dual best with and without epilogue=split, bench2 (pipes, issue slots, stalls)
#   bash dev/gpucall/dual.sh stm [TOTAL]         # staging=stmatrix (WG_STM): tests and paired with the best, both problems; its family combinations
#   bash dev/gpucall/dual.sh stmrung [TOTAL]     # the group best with staging=stmatrix against the baseline (the rung)
#   bash dev/gpucall/dual.sh tall [TOTAL]        # step 32 (prepared in session 12, not yet run): ptxas of the dual with WG_STM; tile_m=auto's tests, its family combinations and its pairing with the dual best; the best variants' resources
#   bash dev/gpucall/dual.sh skprof [TOTAL]      # step 33: E against whole tiles on bench3-4, ncu of the stream-K shapes (~400 s)
#   bash dev/gpucall/dual.sh tl [TOTAL]          # step 33: the WG_TL build's timeline marks, both best variants on bench1-4; tall's tests and pairing; the stmatrix dual ptxas
#   bash dev/gpucall/dual.sh ranges [TOTAL]      # step 33: ranges=cost on the group best: tests, paired on bench1-2, WG_TL marks, bench3 under stream-K, its family combinations
#   bash dev/gpucall/dual.sh tl2 [TOTAL]         # step 33: every block's WG_TL marks and SM (dual bench4, bench2, group bench1); tile_m=auto's rung and family combinations; the best variants' resources
#   bash dev/gpucall/dual.sh ranges2 [TOTAL]     # step 33: WG_TL=2's piece marks (dual bench4, group bench1); ranges=cost at 0.84 paired with the group best; the best variants' resources
#   bash dev/gpucall/dual.sh final13 [TOTAL]     # session 13's close: the peers, then both best variants against the baseline
#   bash dev/gpucall/dual.sh live [TOTAL]        # step 34: token_rows=live on the group best: tests, paired on every shape, its family combinations
#   bash dev/gpucall/dual.sh tokblock [TOTAL]    # step 36: tokens=block (no token pass) against each best on dual bench3, bench1, group bench4, bench3
#   bash dev/gpucall/dual.sh pro [TOTAL]         # step 39: overlap=prologue (the token decode inside the GEMM) in each best: tests, paired with the best, its family combinations
#   bash dev/gpucall/dual.sh srcbest [TOTAL]     # ncu source counters of both best variants (dual bench1, group bench1), summarized per opcode by srcsum.py
#   bash dev/gpucall/dual.sh final15 [TOTAL]     # session 15's close: both bests' tests, each against the baseline, the peers, weights=shared's dual combinations
#   bash dev/gpucall/dual.sh tokprof [TOTAL]     # ncu of one wg_tokens launch (group bench4, bench3, dual bench3), stall samples per SASS line
#   bash dev/gpucall/dual.sh pfptx [TOTAL]       # step 48: ptxas and SASS of the group best's module with and without WG_PF
#   bash dev/gpucall/dual.sh pf17 [TOTAL]        # step 48: prefetch=next on the group best again: tests, paired with the best, WG_TL timelines on bench2
#   bash dev/gpucall/dual.sh res17 [TOTAL]       # the best variants' resources; WG_TL timelines of the group best (bench1-4) and the dual best (bench4)
#   bash dev/gpucall/dual.sh final16|final17|final18 [TOTAL] # session 16 (17, 18): both bests' tests, each against the baseline (every shape), the peers
#   bash dev/gpucall/dual.sh l2abl [TOTAL]       # step 46 (run in session 17's call 1, as l2mc): WG_STAMP builds with and without WG_EXP=256 (no token stage through L2), launch 0's clocks of the dual tall and narrow tiles and the group best; ncu with L2 read counters
#   bash dev/gpucall/dual.sh tok2 [TOTAL]        # step 45: the token pass two threads per row (bin/web) against the commit before (bin/web_ref.gz): tests, each best against the baseline in both builds
#   bash dev/gpucall/dual.sh smem16 [TOTAL]      # the next session's first call: ncu of the dual best's tall and narrow tiles (the shared-memory pipe), then the family cover
#   bash dev/gpucall/dual.sh marks3 [TOTAL]      # the group best's three consumers' chunk marks and piece boundaries (WG_STAMP, bin/web_stamp), bench2 and bench1
#   bash dev/gpucall/dual.sh db2 [TOTAL]         # step 59: pipeline=chunks on the two-consumer tile (bench3-4's, and tile_n=128 on bench1-2): tests, paired with the group best and with the same tile's halves; marks of the best on bench3
#   bash dev/gpucall/dual.sh standing [TOTAL]    # both bests' tests, each against the baseline, and the peers of the same call (session 23)
#   bash dev/gpucall/dual.sh newknobs [TOTAL]    # the family test over token_copy=width and token_wait=early (bin/engine.test); the next session's first call
#   bash dev/gpucall/dual.sh mix24 [TOTAL]       # session 24: ncu source counters (instructions per SASS line) of the group best GW on bench3 and bench1
#   bash dev/gpucall/dual.sh slot [TOTAL]        # step 74: chunk ring slots as unsigned remainders (bin/web) against the commit before (bin/web_ref.gz): tests, alternated A/A medians of both bests (step 73's psv mode and WG_PSV, run in session 26: source at ce7c8b3)
#   bash dev/gpucall/dual.sh cpkeep [TOTAL]      # step 75: the weight copies' sources kept opaque (bin/web) against step 74 (bin/web_ref.gz): tests, alternated A/A medians of both bests, the peers
#   bash dev/gpucall/dual.sh cpn [TOTAL]         # step 76: the copies' byte counts opaque too (bin/web) against step 75 (bin/web_ref.gz): tests, alternated A/A medians, the peers, group bench3-4
#   bash dev/gpucall/dual.sh defer79 [TOTAL]     # session 27, call 4: step 79, WG_DEFER (removed; source at bdc9dea) against the plain build on dual bench3-4
#   bash dev/gpucall/dual.sh modules27 [TOTAL]   # session 27, call 3: schema 3's per-shape modules on the device (TestModuleNamesWhatRan, DT and GW documents); step 78 (narrow autohybrid on dual bench4)
#   bash dev/gpucall/dual.sh standing27 [TOTAL]  # session 27, call 2: the standing and step 77 (WG_CPNSK, removed; source at 301c93d) on dual bench3-4
#   bash dev/gpucall/dual.sh standing28 [TOTAL]  # session 28, call 1: the server end to end (docs/gpu-e2e.md), then the standing (both bests' tests, each against the baseline, the peers)
#   bash dev/gpucall/dual.sh keep29 [TOTAL]      # session 29, call 6: the family test's stream-K and hybrid combinations on step 80's kept code, the dual best, the peers
#   [SKT80=b4|b3|g2] bash dev/gpucall/dual.sh skt80 [TOTAL] # session 29, calls 1-4: step 80, WG_SKT (stream-K partial sums by bulk copies; the define removed once WG_SKT=13 was kept, its forms at 0063fea) against the plain build
#   bash dev/gpucall/dual.sh sass26 [TOTAL]      # session 27, call 1: the SASS (cuobjdump) and ptxas report of every module short benches of both bests compile
#   bash dev/gpucall/dual.sh tlb25 [TOTAL]       # session 25: every block's WG_TL marks (bin/web_tl2.gz), DT on dual bench4 and bench2
#   bash dev/gpucall/dual.sh prof25 [TOTAL]      # session 25: ncu at the card's own clocks, DT on dual bench4 and bench2, GW on group bench3 and bench1
#   bash dev/gpucall/dual.sh tcwrung [TOTAL]     # step 66's rung: the group best with token_copy=width against the baseline
#   bash dev/gpucall/dual.sh gtwe [TOTAL]        # step 67: token_wait=early on both bests: ptxas, tests, each paired with itself
#   bash dev/gpucall/dual.sh gtwe2 [TOTAL]       # step 67: token_wait=early on the dual best; the group best with token_copy=width and token_wait=early against itself
#   bash dev/gpucall/dual.sh skelprobe [TOTAL]   # step 64: dev/wgprobe skel, the GEMM's consumer skeleton built up one element at a time
#   bash dev/gpucall/dual.sh xprobe35 [TOTAL]    # step 91: dev/wgprobe skelx, half the decode per block and the other half passed by the cluster's peer
#   bash dev/gpucall/dual.sh xdec36 [TOTAL]      # step 92: WG_STAMP marks of GW with the pre-packed weight decode (WG_XDEC) and without, bench1, bench2, bench4
#   bash dev/gpucall/dual.sh skel [TOTAL]        # step 62: the group best's chunk marks with the weights' copies and decode, the token copies, or the wgmmas taken out (WG_EXP builds)
#   bash dev/gpucall/dual.sh struct [TOTAL]      # the group best on bench2 and on variants of it that each remove one of its structural costs (the partial weight block, the short K, the 64-token tails)
#   bash dev/gpucall/dual.sh roles [TOTAL]       # dev/wgprobe roles (one warpgroup's wgmmas with 0-3 warpgroups of ALU work beside it) and data (zeros, random, FP4 operands)
# Modes whose experiment builds' defines are gone were removed after their
# calls (stamp, stamp2: WG_FOLDX; ilv: WG_ILV; sleep: WG_SLEEP, WG_LDPTR;
# ssa2: the decoders knob, source at c8eb62e; rot: WG_ROT, source at
# 7651b01; pw: prefetch=producer's first form, a row per producer thread,
# source at fe58daa, its steps now in pw2 and pw3);
# their source is at cdd09cb, the commands in docs/BENCHMARKS.md sections 19-20;
# tokp, tokdirect and toksm (WG_TOKP, WG_TOKDIRECT, WG_TOKSM: the token pass
# on 32 SMs, storing straight to global memory, on 32 SMs with stages in
# flight; all refuted) were removed after session 13's calls 10, 12 and 13,
# their source at 5f44451, the commands in docs/BENCHMARKS.md section 24;
# pieces (ranges=pieces: stream-K ranges priced by their pieces, refuted in
# session 14's call 1) was removed with the knob value, its source at
# 5627ab4, the command in docs/BENCHMARKS.md section 25.
# bfix (fixup=bulk, refuted in session 15's call 1) was removed with the knob,
# its source at b18a922; lean and lean2 (the WG_LEAN experiment build, now the
# only form) after session 15's calls 3-4, their source at d28903a, the
# commands in docs/BENCHMARKS.md section 26; hint (WG_WAITHINT, refuted in
# session 15's call 6) likewise, its source at 6d2f293; cph (WG_CPH, kept
# after session 16's call 1 and now the only form) likewise, its source at
# 362716e, the command in docs/BENCHMARKS.md section 27.
# mc and l2mc (WG_MC, refuted in session 17's call 1) were removed with the
# define, their source at b1b8634; wla (WG_WLA, session 17's call 2, now the
# only form for two-slot rings) likewise, its source at f1f78bd.
# tok49 (the token pass's table, session 17's call 10: no gain, reverted) was
# removed with it, its source at a125f80.
# head (overlap=head, WG_HEAD: the first token chunks decoded in the block,
# refuted in session 18's call 1) was removed with the knob value, its
# source at 7cef7a4, the command in docs/BENCHMARKS.md section 29; early
# (WG_EARLY: a block's way to its first wgmma, no gain in session 18's call
# 2) likewise, its source at 0e7e146; tm192 (tile_m=192 on three group
# consumers, serialized by ptxas, 0.79x, session 18's call 4) with the knob
# value, its source at 71aa8c9; tm112 (tile_m=112 on the group's narrow tile,
# 0.956x on bench3, session 18's call 8) likewise, its source at 8678f4d;
# tm64b (bench3 at 64 tokens on three consumers, 0.979x, session 18's call
# 10; a knob combination) at a7af6c1.
# tsplit (token_split=192: the 129-192-token groups from a 192-token module
# in a launch of their own, 0.94x and 0.89x on bench1-2, session 19's calls
# 1-3) was removed with the knob, the engine's plans of two modules and the
# WG_TL line's t0, their source at c6d7501; bst (stores=bulk, WG_BST: the
# epilogue's rows by bulk async copies, 0.97-0.99x, session 19's call 6) with
# the knob, its source at 72af38a; slot (prefetch=slot, WG_SLOT: the next
# piece's tile and group from the producer's shared slots, 56 bytes of spill,
# 0.96-0.99x, session 19's call 7) with the knob value, its source at 64785d6.
# c4, kp and c4gw (the group's four folded consumers: 256-row whole tiles,
# session 20's calls 3 and 6, 1.063x and 0.986x on whole-wave shapes;
# WG_KP, 128-row tiles split by chunk parity, calls 4-5, 0.84-0.92x) were
# removed with the family's consumers=4 for the group and WG_KP, their
# source at bf38a00, the commands in docs/BENCHMARKS.md section 31.
# ring (turns=ring, WG_RING: the group's three consumers taking turns at
# their halves, 0.950x and 0.954x on bench1-2, session 21's call 1) was
# removed with the knob value, its source at b573702, the command in
# docs/BENCHMARKS.md section 32; lw (stage_sync, WG_LW: one arrival per
# consumer warp and lane 0 polling the token ring, 0.984x, session 21's
# call 3) with the knob, its source at 671e4d0; gtall and gtallptx (the
# group's tile_m=256 with fit64 and whole-stage token copies, 0.762x and
# 0.957x on bench1-2, session 21's calls 8-10, measured again below
# with token_copy=width), their source at c7750bb and daf4e25; gtw, gtw2,
# gtw3 and gtwmarks (that tile again with token_copy=width: 0.918x on
# bench1, ranges=cost on it 0.985x, its chunks' marks by width; session
# 22's calls 1-4, docs/BENCHMARKS.md section 33) with the tile, their
# source at a008ec2.
# spl, spl2 and spl3 (weights=split, WG_SPL: decoder warpgroups beside SS
# wgmma warpgroups, 0.47-0.60x the group best on bench1-2 and 0.56-0.69x on
# bench3; session 24's calls 1-6, docs/BENCHMARKS.md section 35) were
# removed with the knob value, the group's tile_m=256 and the decoders
# knob, their source at 654a972 (the first form, a row per decoder
# thread, at 3804afb).
# h200a (WG_DESC: the wgmma descriptors' upper half held in a register,
# no gain on the group, 0.961x on dual bench1; session 25's call 2,
# docs/BENCHMARKS.md section 36) was removed with the define, its source
# at 8201d28. tok25 (the token pass's group lookup in one round of loads,
# no gain; session 25's call 4) was removed with the change, its source at
# e653975. screen25 (the dual tall tile on a half-tile grid, 0.968x; whole
# narrow tiles on bench3, 0.990x; prefetch=next, 0.992x; session 25's call
# 3) and skcost25 (the tall stream-K module on whole tiles, 0.960x; call 6)
# ran throwaway host builds in which kernels/family_wgmma.go's items closure
# gives other stream-K grids (docs/kernel-notes.md, step 70 and session 25's
# call 6, quote the change); their source at aaf5bdd. skp25 (WG_SKP:
# stream-K in lanes keeping a weight block's token tiles in step, no gain;
# session 25's calls 9-10) was removed with the define, its source at
# 6791e47. fold90 (step 90: tile_m=192 on three folded group consumers,
# serialized at 168 registers; session 34's call 1, docs/BENCHMARKS.md
# section 45) was removed with the knob values, its source at 0b3035d.
# Steps, in order of importance: ptxas's resource report (nvcc, where
# installed); `web bench --suite tests` (correctness on every test shape);
# the benches (the new rungs paired with baseline, and with the variant they
# change); the PyTorch peers; then the family's device test with what is left.
# TOTAL (default 560 s) caps the whole call. Output: $OUT/steps.txt, $OUT/*.log,
# $OUT/summary.md, $OUT/results.tar.gz.
# The device tool brings back at most 8 files, and a mode with many logs
# passes that: end the call's command by packing $OUT into one file, as
# session 25 did: cd $OUT && tar czf all.tgz --exclude=all.tgz * && find .
# -maxdepth 1 ! -name all.tgz ! -name . -exec rm -rf {} +
set -u
: "${OUT:?set OUT to a folder for the results}"
cd "$(dirname "$0")/../.."
MODE=${1:?a mode: one of the case labels below (grep -E "^[a-z0-9 |]+\)$" dev/gpucall/dual.sh)}
TOTAL=${2:-560}
START=$(date +%s)
. dev/gpucall/lib.sh
engine_env
# ptxas NAME DEFINES...: the resource report of one build of wg_group_gemm.cu.
ptxas() {
	local name=$1
	shift
	command -v nvcc >/dev/null || return 0
	step "ptxas_$name" 60 ptxas.log nvcc -cubin -gencode=arch=compute_90a,code=sm_90a -Xptxas -v "$@" \
		-o /tmp/wg.cubin kernels/cuda/wg_group_gemm.cu
}
# sassmix NAME: the integer and half-precision instruction mix of the cubin
# the last ptxas step built (static counts over the whole kernel).
sassmix() {
	command -v cuobjdump >/dev/null || return 0
	cuobjdump -sass /tmp/wg.cubin >/tmp/wg.sass 2>>"$OUT/sass.log" || return 0
	{
		echo "=== sass mix $1"
		grep -oE '\b(LOP3|SHF|PRMT|HMUL2|IMAD|LEA|IADD3|HGMMA|LDS|STS|LDGSTS)\b' /tmp/wg.sass | sort | uniq -c
		echo "total $(grep -cE '^ +/\*[0-9a-f]{4}\*/' /tmp/wg.sass)"
	} >>"$OUT/sass.log"
}
# ptxsummary: the resource lines of every ptxas step so far.
ptxsummary() { grep -E "ptxas_|registers|spill|C75|rror" "$OUT/ptxas.log"; }
# probebuild: dev/wgprobe/probe.cu built here with nvcc, to /tmp/wgprobe
# (ptxas's report into $OUT/wgprobe.txt: check it for C751x first).
probebuild() {
	step wgprobe_build 120 wgprobe.txt nvcc -gencode=arch=compute_90a,code=sm_90a -O3 -Xptxas -v \
		-o /tmp/wgprobe dev/wgprobe/probe.cu
}
# knobfamily KEY=VALUE CAP [RUN]: the family test's combinations with one
# knob value (PITCHTANK_FAMILY_KNOB), both problems or those RUN selects, in
# ${FAMBIN:-./bin/engine.test} (an experiment build's bin/engine_TAG.test).
knobfamily() {
	PITCHTANK_FAMILY_KNOB=$1 step "fam_$1" "$2" family.log "${FAMBIN:-./bin/engine.test}" -test.v -test.timeout 600s \
		-test.run "${3:-^TestWgmmaFamily\$}"
	grep -E -- "^(=== RUN|--- |ok|FAIL|PASS)|combinations|PITCHTANK|WRONG|HUNG" "$OUT/family.log" | tail -12
}
# foldvars: the dual variants of steps 22-23 (whole tiles): W the two-consumer
# wide tile with a producer warpgroup, N the narrow tile, FW W folded; tok
# the nvcc defines the folded tiles share.
foldvars() {
	W='wgmma?tile_n=128&stages=2&registers=split&decode=prmt&tokens=once&overlap=pdl'
	N='wgmma?decode=prmt&tokens=once&overlap=pdl'
	FW="${W/registers=split&/}&producer=folded"
	tok="-DDUAL=1 -DWG_TM=128 -DWG_RS=4 -DWG_DEC=1 -DWG_TOK=1 -DWG_PDL=1 -DWG_FOLD=1"
}
# bestvars: the best variant of each problem as measured (D dual, G group),
# and the shapes the profiles use (/tmp/b2.json dual bench2, /tmp/g1.json
# group bench1).
bestvars() {
	D='wgmma?tile_n=auto&schedule=auto&decode=prmt&tokens=once&overlap=pdl'
	# The dual best since session 12's step 29 (D was the best before it).
	E="$D&epilogue=split"
	# The narrow tile with register weights, the peer of its weights= forms.
	S2='wgmma?stages=2&decode=prmt&tokens=once&overlap=pdl'
	G='wgmma?tile_n=auto&tail_width=fit64&schedule=autohybrid&decode=prmt&tokens=once&overlap=pdl&consumers=3'
	# The group best since session 12's step 31 (G was the best before it).
	GS="$G&staging=stmatrix"
	# The group best since session 22's step 66 (GS was the best before it;
	# the pairings of steps 66-67 are against GS).
	GW="$GS&token_copy=width"
	# The dual best since session 13's step 33 (E was the best before it).
	DT='wgmma?tile_m=auto&tile_n=auto&schedule=auto&decode=prmt&tokens=once&overlap=pdl&epilogue=split'
	echo '[{"m":[512],"n":4096,"k":7168}]' >/tmp/b2.json
	echo '[{"m":[80,176,128,72,64,248,96,160],"n":4096,"k":7168}]' >/tmp/g1.json
}
# narrowpair TAG VARIANT: a narrow-tile variant's tests and benches, paired
# with the same tile with register weights (S2) and with the best variant
# (bestvars: S2, D, G), the dual GEMM then the group's.
narrowpair() {
	local tag=$1 v=$2
	tests "${tag}_tests" nvfp4_dual_gemm "$v" "$S2"
	BENCH_MAX=80 bench "${tag}_s2" nvfp4_dual_gemm "$v" "$S2"
	BENCH_MAX=80 bench "${tag}_best" nvfp4_dual_gemm "$v" "$D"
	tests "g${tag}_tests" nvfp4_group_gemm "$v" "$S2"
	BENCH_MAX=130 bench "g${tag}_s2" nvfp4_group_gemm "$v" "$S2"
	BENCH_MAX=130 bench "g${tag}_best" nvfp4_group_gemm "$v" "$G"
}
# pwpair: prefetch=producer's tests and benches, each problem's best
# variant (bestvars: D, G) with it paired with the same without it.
pwpair() {
	tests d_pw_tests nvfp4_dual_gemm "$D&prefetch=producer" "$D"
	tests g_pw_tests nvfp4_group_gemm "$G&prefetch=producer" "$G"
	grep -E "WRONG|FAIL|mismatch|error" "$OUT/tests.log" | head -5
	BENCH_MAX=75 bench d_pw nvfp4_dual_gemm "$D&prefetch=producer" "$D"
	BENCH_MAX=130 bench g_pw nvfp4_group_gemm "$G&prefetch=producer" "$G"
}
# ptxas defines of the group's best module (three consumers, fit64,
# hybrid stream-K) and of the dual wide tile, for the ptxas step.
GDEFS="-DDUAL=0 -DSTAGES=2 -DWG_CONS=3 -DWG_CREGS=160 -DWG_DEC=1 -DWG_FIT=2 -DWG_MB=1 -DWG_PDL=1 -DWG_RS=4 -DWG_SK=2 -DWG_TM=128 -DWG_TOK=1"
DWDEFS="-DDUAL=1 -DSTAGES=2 -DWG_CONS=2 -DWG_CREGS=224 -DWG_DEC=1 -DWG_MB=2 -DWG_PDL=1 -DWG_RS=4 -DWG_TM=128 -DWG_TOK=1"
# ncubench STEP CAP LOG PROBLEM VARIANT SHAPES NCU-OPTION...: ncu over an
# A/A bench of VARIANT on the shapes file SHAPES, ungated (ncu serializes
# the launches), within NCU_MAX seconds (default 100).
ncubench() {
	local name=$1 cap=$2 log=$3 prob=$4 var=$5 shp=$6
	shift 6
	step "$name" "$cap" "$log" "${NCU:-ncu}" "$@" ./bin/web bench --problem "$prob" --aa --baseline "$var" --ungated \
		--shapes "$shp" --device 0 --cache-dir "$C" --max-time "${NCU_MAX:-100}s" --json "$R/$name.json"
}
# unpackexp: the experiment builds of dev/gpucall/expbuild.sh (bin/web_TAG.gz,
# bin/engine_TAG.test.gz).
unpackexp() {
	for z in bin/web_*.gz bin/engine_*.test.gz; do
		[ -f "$z" ] || continue
		gunzip -kf "$z" && chmod +x "${z%.gz}"
	done
}
# stampbench NAME WEB VARIANT [PROBLEM SHAPES]: a WG_STAMP build's stamps of the dual VARIANT on
# bench2 (/tmp/b2.json) into $OUT/stamp_NAME.txt. Device printf goes through
# the C library's stdout: unbuffered, or Go's exit loses it.
# PROBLEM and SHAPES (a file) replace the dual GEMM and bench2.
stampbench() {
	step "stamp_$1" 90 "stamp_$1.txt" stdbuf -o0 "$2" bench --problem "${4:-nvfp4_dual_gemm}" --aa --baseline "$3" \
		--ungated --shapes "${5:-/tmp/b2.json}" --device 0 --cache-dir "$C" --max-time 15s --json "$R/stamp_$1.json"
}
# benchshapes: each benchmark shape alone, /tmp/tl_bN.json (dual) and
# /tmp/tl_gN.json (group), and each problem's first two and last two,
# /tmp/d12.json, /tmp/d34.json, /tmp/g12.json, /tmp/g34.json.
benchshapes() {
	python3 - <<'PY'
import json
for prob, tag, pair in (("nvfp4_dual_gemm", "b", "d"), ("nvfp4_group_gemm", "g", "g")):
    d = json.load(open("kernels/problems/%s.json" % prob))["benchmarks"]
    for i, b in enumerate(d):
        json.dump([b], open("/tmp/tl_%s%d.json" % (tag, i + 1), "w"))
    json.dump(d[:2], open("/tmp/%s12.json" % pair, "w"))
    json.dump(d[2:], open("/tmp/%s34.json" % pair, "w"))
PY
}
# newbuild: the best variants, the experiment builds unpacked, the
# one-shape files, and both bests' tests in bin/web (the build under test).
newbuild() {
	bestvars
	unpackexp
	benchshapes
	tests d_tests nvfp4_dual_gemm "$DT" baseline
	tests g_tests nvfp4_group_gemm "$GW" baseline
}
# refnew TAG PROBLEM VARIANT SHAPES MAX RUNS...: A/A medians of VARIANT in
# bin/web_ref (runs named ref*; REFWEB another build) and bin/web (the
# others; NEWWEB another), in the order of RUNS, into $OUT/aa.log
# ($R/aa_TAG_RUN.json); SHAPES a file, or "" for the problem's benchmarks;
# MAX the bench's --max-time in seconds (the first reference run also
# compiles every module of an auto variant).
refnew() {
	local tag=$1 prob=$2 var=$3 shp=$4 max=$5 b w
	shift 5
	for b in "$@"; do
		w=${NEWWEB:-./bin/web}
		[ "${b#ref}" != "$b" ] && w=${REFWEB:-./bin/web_ref}
		step "aa_${tag}_$b" $((max + 10)) aa.log "$w" bench --problem "$prob" --aa --baseline "$var" \
			${shp:+--shapes "$shp"} --device 0 --cache-dir "$C" --max-time "${max}s" --json "$R/aa_${tag}_$b.json"
	done
}
# sassdump: cuobjdump -sass of every cubin in the engine's cache, with its
# ptxas report, into $R/sass/KEY.sass and KEY.log (files named by cache
# key: `go run ./dev/ptxloop -keys 13.0` here names the benchmark modules,
# `-sass` counts their HGMMA loops).
sassdump() {
	local f k
	mkdir -p "$R/sass"
	for f in "$C"/*.cubin; do
		k=$(basename "$f" .cubin)
		cuobjdump -sass "$f" >"$R/sass/$k.sass" 2>&1
		cp -f "$C/$k.log" "$R/sass/$k.log" 2>/dev/null
	done
}
# ptxaslist: the engine's ptxas -v report of every module this call compiled,
# oldest first, into $OUT/ptxas.txt (named by cache key: `go run
# ./dev/ptxloop -keys 13.0` here names the modules); then aa.log's rows.
ptxaslist() {
	local f
	for f in $(ls -tr "$C"/*.log); do
		echo "== $(basename "$f") $(date -r "$f" +%T)"
		grep -E "registers|spill|C75|Compiling entry" "$f"
	done >"$OUT/ptxas.txt" 2>&1
	grep -E "^=== aa|^[0-9] +[0-9]x|^status" "$OUT/aa.log" | cut -c1-170
}
# tlruns "BUILD..." "TAG PROBLEM SHAPE VARIANT"...: ungated A/A benches of
# each VARIANT on /tmp/tl_SHAPE.json in each experiment build bin/web_BUILD
# (WG_TL marks into $OUT/tl.txt, then $OUT/tl_marks.txt).
tlruns() {
	local builds=$1 b x
	shift
	for b in $builds; do
		for x in "$@"; do
			set -- $x
			# 30 s: a WG_TL=2 build's prints slow its launches, and on dual
			# bench4 20 s ran out in the timing phase (session 31, call 5).
			step "${b}_$1" 55 tl.txt stdbuf -o0 "./bin/web_$b" bench --problem "$2" --aa --baseline "$4" --ungated \
				--shapes "/tmp/tl_$3.json" --device 0 --cache-dir "$C" --max-time 30s --json "$R/${b}_$1.json"
		done
	done
	grep -E "^=== |^WGTL" "$OUT/tl.txt" | cut -c1-200 >"$OUT/tl_marks.txt"
}
# expmods: the dual's stream-K modules of bench3 (N3, the 128-token tile)
# and bench4 (T4, the 256-token tile), as DT runs them there.
expmods() {
	N3='wgmma?schedule=streamk&decode=prmt&tokens=once&overlap=pdl&epilogue=split'
	T4='wgmma?tile_m=256&stages=2&schedule=streamk&registers=split&decode=prmt&tokens=once&overlap=pdl&epilogue=split'
	# The group best's hybrid module (GW on group bench1-2).
	GH='wgmma?tile_n=192&tail_width=fit64&schedule=hybrid&registers=split&decode=prmt&tokens=once&overlap=pdl&staging=stmatrix&consumers=3&token_copy=width'
}
# expcheck TAG "t4 n3 gw" KNOB...: an experiment build's modules (bin/web_TAG)
# on every test shape (gw: the group best), then TestWgmmaFamily's
# combinations of problem EXPFAM (default the dual GEMM; EXPFAMCAP seconds
# each, default 100) with each PITCHTANK_FAMILY_KNOB value in
# bin/engine_TAG.test. Needs expmods (and bestvars for gw).
expcheck() {
	local tag=$1 mods=$2 m kn fam=${EXPFAM:-nvfp4_dual_gemm} cap=${EXPFAMCAP:-100}
	shift 2
	for m in $mods; do
		case $m in
		t4) WEB=./bin/web_$tag tests t4_tests nvfp4_dual_gemm "$T4" baseline ;;
		n3) WEB=./bin/web_$tag tests n3_tests nvfp4_dual_gemm "$N3" baseline ;;
		gw) WEB=./bin/web_$tag tests g_tests nvfp4_group_gemm "$GW" baseline ;;
		esac
	done
	grep -E "^status" "$OUT/tests.log"
	for kn in "$@"; do
		FAMBIN=./bin/engine_$tag.test knobfamily "$kn" "$cap" "^TestWgmmaFamily\$/^$fam\$"
	done
}
# expsetup: what every experiment mode needs before expcheck and expaa.
expsetup() {
	bestvars
	unpackexp
	benchshapes
	engine_env
	expmods
}
# groupexp TAG ROUNDS [KNOB...]: a group experiment build's call
# (bin/web_TAG, bin/engine_TAG.test; bin/web the kept build): GW's tests in
# that build, TestWgmmaFamily's group combinations of each KNOB in it
# (EXPFAMCAP seconds each, default 120), A/A of GW's hybrid module against
# bin/web on group bench2 and bench1, ROUNDS of each (expaa's sample cap),
# and the modules' ptxas lines.
groupexp() {
	local tag=$1 rounds=$2
	shift 2
	expsetup
	EXPFAM=nvfp4_group_gemm EXPFAMCAP=${EXPFAMCAP:-120} expcheck "$tag" gw "$@"
	expaa "$tag" "$rounds" g2 g1
	ptxaslist
	pack
}
# expaa TAG ROUNDS SHAPE...: A/A medians of bin/web and bin/web_TAG in
# turn (TAG may be several tags, "t1 t2": each build in turn after bin/web),
# ROUNDS of each, on each SHAPE (b4: T4 on dual bench4, b3: N3 on
# bench3, g1 and g2: GH on group bench1 and bench2). Needs expmods and
# benchshapes. A group run's 2,000 samples a role need ~55 s, more than
# its 25 s, so group runs are capped at AA_SAMPLES samples a role (default
# 500: `web bench --max-samples`, session 33), which ends them inside the
# 25 s with their documents written; AA_SAMPLES=0 (or a bin/web from
# before the flag) leaves the rule's 2,000, and the run is cut. Either way
# `python3 dev/gpucall/aamed.py aa.log [DOCS]` reads every run's figure
# (the variant role's last running median, or its document's median where
# the run ended on its own).
expaa() {
	local tag=$1 rounds=$2 shp v r b w prob cap
	shift 2
	for shp in "$@"; do
		v=$T4 prob=nvfp4_dual_gemm cap=()
		[ "$shp" = b3 ] && v=$N3
		case $shp in g*) v=$GH prob=nvfp4_group_gemm ;; esac
		case $shp in g*) [ "${AA_SAMPLES:-500}" != 0 ] && cap=(--max-samples "${AA_SAMPLES:-500}") ;; esac
		for r in $(seq "$rounds"); do
			for b in plain $tag; do
				w=./bin/web_$b
				[ "$b" = plain ] && w=./bin/web
				step "aa_${shp}_$b$r" 35 aa.log "$w" bench --problem "$prob" --aa --baseline "$v" \
					--shapes "/tmp/tl_$shp.json" --device 0 --cache-dir "$C" --max-time 25s "${cap[@]}" \
					--json "$R/aa_${shp}_$b$r.json"
			done
		done
	done
	grep -E "^status" "$OUT/aa.log"
}
# srcprof TAG: ncu source counters of DT on dual bench1 and GS on group
# bench1 in ${WEB:-./bin/web}, one launch each, summarized per opcode
# (srcsum.py) into $OUT/srcsum.txt; the CSVs go to $R/src_TAGd1.csv and
# src_TAGg1.csv. Needs bestvars and benchshapes.
srcprof() {
	local NCU v name prob kern shp var
	NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
	for v in "$1d1|nvfp4_dual_gemm|wg_dual_gemm|b1|$DT" "$1g1|nvfp4_group_gemm|wg_group_gemm|g1|$GS"; do
		IFS='|' read -r name prob kern shp var <<<"$v"
		step "ncu_src_$name" 150 ncu.log "$NCU" -k "regex:$kern" --launch-skip 10 --launch-count 1 \
			--section WarpStateStats --section SourceCounters --section SchedulerStats --import-source no -f -o "/tmp/src_$name" \
			"${WEB:-./bin/web}" bench --problem "$prob" --aa --baseline "$var" --ungated --shapes "/tmp/tl_$shp.json" \
			--device 0 --cache-dir "$C" --max-time 100s --json "$R/src_$name.json"
		step "ncu_page_$name" 60 ncu.log sh -c "\"$NCU\" -i /tmp/src_$name.ncu-rep --page source --csv --print-source sass >\"$R/src_$name.csv\""
		python3 dev/gpucall/srcsum.py --top 20 "$R/src_$name.csv" >>"$OUT/srcsum.txt" 2>&1
	done
}
# tests NAME PROBLEM VARIANT BASELINE: correctness on every test shape.
tests() {
	step "$1" 120 tests.log "${WEB:-./bin/web}" bench --problem "$2" --variant "$3" --baseline "$4" \
		--suite tests --device 0 --cache-dir "$C" --max-time 110s --json "$R/$1.json"
}
# best SUFFIX DUAL GROUP [GROUP_MAX]: the best variant of each problem against
# the baseline (d_bestSUFFIX, g_bestSUFFIX); the group baseline is slow.
best() {
	BENCH_MAX=70 bench "d_best$1" nvfp4_dual_gemm "$2"
	BENCH_MAX=${4:-130} bench "g_best$1" nvfp4_group_gemm "$3"
}
# peers: the PyTorch peers of both problems, in this call.
peers() {
	step peer 120 peer.log env PYTHONUNBUFFERED=1 python3 bench/peer/peer.py --out "$R/peer.json"
}
# family [PROBLEM]: TestWgmmaFamily (one problem's half, or both) with what is left.
family() {
	step family 600 family.log ./bin/engine.test -test.v -test.timeout 600s -test.run "^TestWgmmaFamily\$${1:+/^$1\$}"
	grep -E -- "^(=== RUN|--- |ok|FAIL|PASS)|combinations|WRONG" "$OUT/family.log" | tail -20
}
# autorung P PROBLEM PARENT BASELINE_MAX FAMILY_CAP: the rung
# wgmma?tile_n=auto&schedule=auto&decode=prmt of PROBLEM: tests, paired with
# PARENT and with the baseline, then PROBLEM's half of the family test.
autorung() {
	local p=$1 problem=$2 parent=$3 bmax=$4 fcap=$5
	local v='wgmma?tile_n=auto&schedule=auto&decode=prmt'
	tests "${p}_auto_tests" "$problem" "$v" "$parent"
	BENCH_MAX=110 bench "${p}_auto_vs_parent" "$problem" "$v" "$parent"
	BENCH_MAX=$bmax bench "${p}_tileauto" "$problem" "$v"
	TITLE="wgmma $problem tile_n=auto call" summarize
	step family "$fcap" family.log ./bin/engine.test -test.v -test.timeout 600s -test.run "^TestWgmmaFamily\$/^$problem\$"
	grep -E -- "^(=== RUN|--- |ok|FAIL|PASS)|combinations" "$OUT/family.log" | tail -8
}
# ncudual CAP VARIANT [BENCH_FLAGS...]: one launch of the dual GEMM
# VARIANT on bench2 (M512 N4096 K7168; NCU_SHAPE another shape's JSON)
# under ncu: pipes, issue, stalls, into $OUT/ncu_dual.txt. A gated bench
# hangs under ncu (it waits inside the launch that the held stream never
# starts): pass --ungated.
ncudual() {
	local cap=$1 v=$2
	shift 2
	local ncu
	ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
	local shape='[{"m":[512],"n":4096,"k":7168}]'
	[ -z "${NCU_SHAPE:-}" ] || shape=$NCU_SHAPE
	echo "$shape" >/tmp/b2.json
	local m=${NCU_EXTRA:+$NCU_EXTRA,}sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_shared_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed.sum,sm__cycles_elapsed.max,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,lts__throughput.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_elapsed,smsp__average_warp_latency_issue_stalled_barrier.ratio,smsp__average_warp_latency_issue_stalled_wait.ratio,smsp__average_warp_latency_issue_stalled_long_scoreboard.ratio,smsp__average_warp_latency_issue_stalled_math_pipe_throttle.ratio,smsp__average_warp_latency_issue_stalled_short_scoreboard.ratio,smsp__average_warp_latency_issue_stalled_dispatch_stall.ratio,smsp__average_warp_latency_issue_stalled_mio_throttle.ratio,smsp__average_warp_latency_issue_stalled_sleeping.ratio
	step ncu_dual "$cap" ncu_dual.txt "$ncu" -k regex:wg_dual_gemm --launch-skip 10 --launch-count 1 \
		--section SpeedOfLight --section SchedulerStats --section WarpStateStats --metrics "$m" \
		./bin/web bench --problem nvfp4_dual_gemm --aa --baseline "$v" "$@" --shapes /tmp/b2.json \
		--device 0 --cache-dir "$C" --max-time $((cap - 60))s --json "$R/prof_dual.json"
	grep -E "pipe_|inst_executed|cycles_elapsed|wavefronts|throughput|Duration|Issue Slots Busy|No Eligible|Warp Cycles Per Issued|Active Warps|Eligible Warps|stalled" "$OUT/ncu_dual.txt" | head -40
}
# xbuilds TAG PROBLEM VARIANT SHAPES MAX NEW REF: VARIANT paired with the
# baseline on the shapes file SHAPES, within MAX seconds, in build NEW and
# then in build REF ($R/TAG_new.json, TAG_ref.json: one bench process runs
# one build; go run ./dev/xratio compares the two).
xbuilds() {
	local tag=$1 prob=$2 var=$3 shp=$4 max=$5 x
	for x in "new $6" "ref $7"; do
		set -- $x
		step "${tag}_$1" $((max + 10)) bench.log "$2" bench --problem "$prob" --variant "$var" --baseline baseline \
			--shapes "$shp" --device 0 --cache-dir "$C" --max-time "${max}s" --json "$R/${tag}_$1.json"
	done
}
# smemprof: the dual best (DT) on its tall (bench2) and narrow (M256) whole
# tiles under ncu, one launch each, into $OUT/ncu_tall.txt and ncu_narrow.txt.
smemprof() {
	ncudual 150 "$DT" --ungated
	mv -f "$OUT/ncu_dual.txt" "$OUT/ncu_tall.txt"
	NCU_SHAPE='[{"m":[256],"n":4096,"k":7168}]' ncudual 150 "$DT" --ungated
	mv -f "$OUT/ncu_dual.txt" "$OUT/ncu_narrow.txt"
}
# stampclocks FILE: launch 0's block spans and block 0's SM clock of every
# stamp run so far ($OUT/stamp_*.txt), into $OUT/FILE.
stampclocks() {
	for f in "$OUT"/stamp_*.txt; do
		echo "== $(basename "$f")"
		python3 dev/gpucall/stamps.py --launch 0 "$f" | grep -E 'blocks|SM clock'
	done | tee "$OUT/$1"
}
# l2ablate: step 46's clocks and ncu (mode l2abl); after bestvars, unpackexp
# and benchshapes (the narrow tile's shape is bench1, /tmp/tl_b1.json).
l2ablate() {
	for b in "" e256 ${L2ABL_MORE:-e32}; do
		[ -x "./bin/web_stamp$b" ] || continue
		stampbench "t$b" "./bin/web_stamp$b" "$DT"
		stampbench "n$b" "./bin/web_stamp$b" "$DT" nvfp4_dual_gemm /tmp/tl_b1.json
		stampbench "g$b" "./bin/web_stamp$b" "$GS" nvfp4_group_gemm /tmp/g1.json
	done
	stampclocks l2abl.txt
	NCU_EXTRA=lts__t_sectors_op_read.sum,lts__t_bytes.sum.per_second smemprof
}
case "$MODE" in
dual)
	ptxas dual_tm128_mb1 -DDUAL=1 -DWG_TM=128 -DWG_MB=1 -DSTAGES=3 -DWG_RS=4
	ptxas dual_tm64_mb1 -DDUAL=1 -DWG_TM=64 -DWG_MB=1 -DSTAGES=3 -DWG_RS=4
	ptxas dual_tm64_mb2 -DDUAL=1 -DWG_TM=64 -DWG_MB=2 -DSTAGES=4 -DWG_RS=3
	tests d_tests nvfp4_dual_gemm wgmma fused
	bench d_wgmma nvfp4_dual_gemm wgmma
	bench d_wgmma_vs_fused nvfp4_dual_gemm wgmma fused
	bench d_wgmma_tm64 nvfp4_dual_gemm 'wgmma?tile_m=64'
	BENCH_MAX=150 bench g_wgmma nvfp4_group_gemm wgmma
	step peer 120 peer.log env PYTHONUNBUFFERED=1 python3 bench/peer/peer.py --out "$R/peer.json"
	TITLE="wgmma dual call" summarize
	step family 400 family.log ./bin/engine.test -test.v -test.timeout 600s -test.run '^TestWgmmaFamily$/^nvfp4_dual_gemm$'
	;;
streamk)
	ptxas dual_sk -DDUAL=1 -DWG_TM=128 -DWG_MB=1 -DSTAGES=3 -DWG_RS=4 -DWG_SK=1
	ptxas group_sk -DWG_TM=128 -DWG_MB=1 -DSTAGES=3 -DWG_RS=4 -DWG_SK=1
	tests d_sk_tests nvfp4_dual_gemm 'wgmma?schedule=streamk' wgmma
	tests g_sk_tests nvfp4_group_gemm 'wgmma?schedule=streamk' wgmma
	bench d_sk nvfp4_dual_gemm 'wgmma?schedule=streamk'
	bench d_sk_vs_wgmma nvfp4_dual_gemm 'wgmma?schedule=streamk' wgmma
	bench g_sk_vs_wgmma nvfp4_group_gemm 'wgmma?schedule=streamk' wgmma
	step peer 120 peer.log env PYTHONUNBUFFERED=1 python3 bench/peer/peer.py --out "$R/peer.json"
	BENCH_MAX=150 bench g_sk nvfp4_group_gemm 'wgmma?schedule=streamk'
	TITLE="wgmma stream-K call" summarize
	step family 400 family.log ./bin/engine.test -test.v -test.timeout 600s -test.run '^TestWgmmaFamily$'
	;;
auto)
	ptxas dual_auto -DDUAL=1 -DWG_TM=128 -DWG_MB=1 -DSTAGES=3 -DWG_RS=4 -DWG_SK=1
	step family 200 family.log ./bin/engine.test -test.v -test.timeout 600s -test.run '^TestWgmmaFamily$'
	bench d_auto nvfp4_dual_gemm 'wgmma?schedule=auto'
	bench d_auto_vs_wgmma nvfp4_dual_gemm 'wgmma?schedule=auto' wgmma
	step peer 120 peer.log env PYTHONUNBUFFERED=1 python3 bench/peer/peer.py --out "$R/peer.json"
	BENCH_MAX=150 bench g_wgmma nvfp4_group_gemm wgmma
	TITLE="wgmma schedule=auto call" summarize
	;;
grid)
	step family 200 family.log ./bin/engine.test -test.v -test.timeout 600s -test.run '^TestWgmmaFamily$'
	bench d_auto nvfp4_dual_gemm 'wgmma?schedule=auto'
	bench d_sk_vs_wgmma nvfp4_dual_gemm 'wgmma?schedule=streamk' wgmma
	step peer 120 peer.log env PYTHONUNBUFFERED=1 python3 bench/peer/peer.py --out "$R/peer.json"
	BENCH_MAX=150 bench g_sk_vs_wgmma nvfp4_group_gemm 'wgmma?schedule=streamk' wgmma
	TITLE="wgmma stream-K grid call" summarize
	;;
split)
	DS='wgmma?tile_n=128&stages=2&registers=split&schedule=auto'
	GS='wgmma?tile_n=256&stages=2&registers=split&schedule=auto'
	tests d_split_tests nvfp4_dual_gemm "$DS" wgmma
	tests g_split_tests nvfp4_group_gemm "$GS" wgmma
	bench d_split nvfp4_dual_gemm "$DS"
	bench d_split_vs_auto nvfp4_dual_gemm "$DS" 'wgmma?schedule=auto'
	BENCH_MAX=120 bench g_split_vs_wgmma nvfp4_group_gemm "$GS" wgmma
	step peer 120 peer.log env PYTHONUNBUFFERED=1 python3 bench/peer/peer.py --out "$R/peer.json"
	TITLE="wgmma registers=split call" summarize
	;;
chunks)
	# The whole-chunk consumer pipeline: resources, correctness, paired benches.
	GC='wgmma?registers=split&pipeline=chunks'
	DC='wgmma?schedule=auto&registers=split&pipeline=chunks'
	ptxas group_db -DWG_TM=128 -DWG_MB=1 -DSTAGES=3 -DWG_RS=4 -DWG_CREGS=216 -DWG_DB=1
	ptxas dual_db -DDUAL=1 -DWG_TM=128 -DWG_MB=1 -DSTAGES=3 -DWG_RS=4 -DWG_CREGS=216 -DWG_DB=1
	grep -E "ptxas_|registers|spill|C75" "$OUT/ptxas.log"
	tests g_db_tests nvfp4_group_gemm "$GC" wgmma
	tests d_db_tests nvfp4_dual_gemm "$DC" wgmma
	BENCH_MAX=80 bench g_db_vs_wgmma nvfp4_group_gemm "$GC" wgmma
	BENCH_MAX=80 bench d_db_vs_auto nvfp4_dual_gemm "$DC" 'wgmma?schedule=auto'
	BENCH_MAX=150 bench g_db nvfp4_group_gemm "$GC"
	bench d_db nvfp4_dual_gemm "$DC"
	TITLE="wgmma pipeline=chunks call" summarize
	;;
prmt)
	# decode=prmt: resources and static instruction mix of both decodes,
	# correctness on every test shape, the rungs paired with the variants
	# they change.
	GP='wgmma?decode=prmt'
	DB='wgmma?tile_n=128&stages=2&schedule=auto&registers=split'
	DP="$DB&decode=prmt"
	for dec in 0 1; do
		ptxas group_dec$dec -DWG_TM=128 -DWG_MB=1 -DSTAGES=3 -DWG_RS=4 -DWG_DEC=$dec
		sassmix group_dec$dec
		ptxas dual_split_dec$dec -DDUAL=1 -DWG_TM=128 -DWG_MB=2 -DSTAGES=2 -DWG_RS=3 -DWG_CREGS=224 -DWG_DEC=$dec
		sassmix dual_split_dec$dec
	done
	grep -E "ptxas_|registers|spill|C75" "$OUT/ptxas.log"
	tests g_prmt_tests nvfp4_group_gemm "$GP" wgmma
	tests d_prmt_tests nvfp4_dual_gemm "$DP" "$DB"
	BENCH_MAX=80 bench g_prmt_vs_wgmma nvfp4_group_gemm "$GP" wgmma
	BENCH_MAX=80 bench d_prmt_vs_split nvfp4_dual_gemm "$DP" "$DB"
	TITLE="wgmma decode=prmt call" summarize
	;;
prmtcheck)
	# The decode=prmt rungs against the baseline, the group rung paired with
	# wgmma (80 s was too short for its third shape), the same call's peers.
	bench d_prmt nvfp4_dual_gemm 'wgmma?tile_n=128&stages=2&schedule=auto&registers=split&decode=prmt'
	BENCH_MAX=140 bench g_prmt nvfp4_group_gemm 'wgmma?decode=prmt'
	BENCH_MAX=110 bench g_prmt_vs_wgmma nvfp4_group_gemm 'wgmma?decode=prmt' wgmma
	step peer 120 peer.log env PYTHONUNBUFFERED=1 python3 bench/peer/peer.py --out "$R/peer.json"
	TITLE="wgmma decode=prmt check" summarize
	;;
prmtfamily)
	# The family test (the default decode's every combination, the pair
	# cover) and the resource report of the fastest variants.
	step family 420 family.log ./bin/engine.test -test.v -test.timeout 600s -test.run '^TestWgmmaFamily$'
	grep -E -- "^(=== RUN|--- |ok|FAIL|PASS)|combinations" "$OUT/family.log" | tail -20
	step resources 100 resources.log ./bin/engine.test -test.v -test.run '^TestBestVariantResources$'
	grep -E "wgmma" "$OUT/resources.log" | cut -c1-400 | head -20
	;;
tileauto)
	autorung d nvfp4_dual_gemm 'wgmma?tile_n=128&stages=2&schedule=auto&registers=split&decode=prmt' 80 260
	;;
gtileauto)
	autorung g nvfp4_group_gemm 'wgmma?decode=prmt' 140 200
	;;
tokens)
	# tokens=once against its parent (the best variant of each problem),
	# correctness first; then resources and the same call's peers.
	A='wgmma?tile_n=auto&schedule=auto&decode=prmt'
	tests g_tok_tests nvfp4_group_gemm "$A&tokens=once" "$A"
	BENCH_MAX=110 bench g_tok_vs_auto nvfp4_group_gemm "$A&tokens=once" "$A"
	tests d_tok_tests nvfp4_dual_gemm "$A&tokens=once" "$A"
	BENCH_MAX=80 bench d_tok_vs_auto nvfp4_dual_gemm "$A&tokens=once" "$A"
	TITLE="wgmma tokens=once call" summarize
	ptxas group_tok -DWG_TM=128 -DWG_MB=1 -DSTAGES=3 -DWG_RS=4 -DWG_DEC=1 -DWG_TOK=1
	ptxas dual_tok_split -DDUAL=1 -DWG_TM=128 -DWG_MB=2 -DSTAGES=2 -DWG_RS=3 -DWG_CREGS=224 -DWG_DEC=1 -DWG_TOK=1
	grep -E "ptxas_|registers|spill|C75" "$OUT/ptxas.log"
	step peer 120 peer.log env PYTHONUNBUFFERED=1 python3 bench/peer/peer.py --out "$R/peer.json"
	;;
tokensrung)
	# The tokens=once rungs against the baseline, then step 13's experiments,
	# each paired with the variant it changes.
	A='wgmma?tile_n=auto&schedule=auto&decode=prmt&tokens=once'
	ptxas group_fit_split -DWG_TM=128 -DWG_MB=1 -DSTAGES=3 -DWG_RS=4 -DWG_DEC=1 -DWG_TOK=1 -DWG_FIT=1 -DWG_CREGS=224
	grep -E "ptxas_|registers|spill|C75" "$OUT/ptxas.log"
	BENCH_MAX=70 bench d_tok nvfp4_dual_gemm "$A"
	BENCH_MAX=130 bench g_tok nvfp4_group_gemm "$A"
	N='wgmma?decode=prmt&tokens=once'
	BENCH_MAX=70 bench g_fit_vs_tok nvfp4_group_gemm 'wgmma?tail_width=fit&registers=split&decode=prmt&tokens=once' "$N"
	GW='wgmma?tile_n=256&stages=2&registers=split&schedule=auto&decode=prmt&tokens=once'
	BENCH_MAX=70 bench g_w3_vs_w2 nvfp4_group_gemm "${GW/stages=2/stages=3}" "$GW"
	DW='wgmma?tile_n=128&stages=2&registers=split&schedule=auto&decode=prmt&tokens=once'
	BENCH_MAX=50 bench d_w3_vs_w2 nvfp4_dual_gemm "${DW/stages=2/stages=3}" "$DW"
	BENCH_MAX=50 bench g_s4_vs_s3 nvfp4_group_gemm 'wgmma?stages=4&decode=prmt&tokens=once' "$N"
	TITLE="wgmma tokens=once rungs and step 13" summarize
	;;
fit256)
	# Step 13's group rung candidate (tail_width=fit under tile_n=auto) and
	# step 14's 256-token dual tile, each paired with the best variant.
	B='wgmma?tile_n=auto&schedule=auto&decode=prmt&tokens=once'
	GF='wgmma?tile_n=auto&schedule=auto&tail_width=fit&decode=prmt&tokens=once'
	D2='wgmma?tile_m=256&stages=2&schedule=auto&registers=split&decode=prmt&tokens=once'
	ptxas group_wide_fit_sk -DWG_TM=128 -DWG_MB=2 -DSTAGES=2 -DWG_RS=4 -DWG_DEC=1 -DWG_TOK=1 -DWG_FIT=1 -DWG_SK=1 -DWG_CREGS=224
	ptxas dual_tm256 -DDUAL=1 -DWG_TM=256 -DWG_MB=1 -DSTAGES=2 -DWG_RS=2 -DWG_DEC=1 -DWG_TOK=1 -DWG_CREGS=224
	ptxas dual_tm256_sk -DDUAL=1 -DWG_TM=256 -DWG_MB=1 -DSTAGES=2 -DWG_RS=2 -DWG_DEC=1 -DWG_TOK=1 -DWG_CREGS=224 -DWG_SK=1
	grep -E "ptxas_|registers|spill|C75" "$OUT/ptxas.log"
	tests d_256_tests nvfp4_dual_gemm "$D2" "$B"
	BENCH_MAX=70 bench d_256_vs_best nvfp4_dual_gemm "$D2" "$B"
	tests g_fit_tests nvfp4_group_gemm "$GF" "$B"
	BENCH_MAX=120 bench g_fit_vs_best nvfp4_group_gemm "$GF" "$B"
	TITLE="wgmma fit and 256-token call" summarize
	BENCH_MAX=60 bench d_256 nvfp4_dual_gemm "$D2"
	BENCH_MAX=130 bench g_fit nvfp4_group_gemm "$GF"
	TITLE="wgmma fit and 256-token call" summarize
	;;
proftok)
	# Where the tokens=once variants' time goes (ncu, one launch each): the
	# dual GEMM on bench2 and the group GEMM on bench1, L2 and shared-memory
	# throughput beside the issue and stall counters; then the family test.
	NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
	B='wgmma?tile_n=auto&schedule=auto&decode=prmt&tokens=once'
	echo '[{"m":[512],"n":4096,"k":7168}]' >/tmp/d2.json
	echo '[{"m":[80,176,128,72,64,248,96,160],"n":4096,"k":7168}]' >/tmp/g1.json
	M=sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_shared_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed.sum,sm__cycles_elapsed.max,lts__t_bytes.sum.per_second,lts__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sectors_srcunit_tex_op_read.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,smsp__average_warp_latency_issue_stalled_barrier.ratio,smsp__average_warp_latency_issue_stalled_wait.ratio,smsp__average_warp_latency_issue_stalled_long_scoreboard.ratio,smsp__average_warp_latency_issue_stalled_math_pipe_throttle.ratio
	step ncu_dual "150" ncu_dual.txt "$NCU" -k regex:wg_dual_gemm --launch-skip 10 --launch-count 1 \
		--section SpeedOfLight --section SchedulerStats --section WarpStateStats --section MemoryWorkloadAnalysis --metrics "$M" \
		./bin/web bench --problem nvfp4_dual_gemm --aa --baseline "$B" --shapes /tmp/d2.json \
		--device 0 --cache-dir "$C" --max-time 100s --json "$R/prof_dual.json"
	step ncu_group "170" ncu_group.txt "$NCU" -k regex:wg_group_gemm --launch-skip 10 --launch-count 1 \
		--section SpeedOfLight --section SchedulerStats --section WarpStateStats --section MemoryWorkloadAnalysis --metrics "$M" \
		./bin/web bench --problem nvfp4_group_gemm --aa --baseline "$B" --shapes /tmp/g1.json \
		--device 0 --cache-dir "$C" --max-time 120s --json "$R/prof_group.json"
	pack
	step family 600 family.log ./bin/engine.test -test.v -test.timeout 600s -test.run '^TestWgmmaFamily$'
	grep -E -- "^(=== RUN|--- |ok|FAIL|PASS)|combinations" "$OUT/family.log" | tail -20
	;;
final3)
	# The best variants against the baseline with the timing gate (the
	# stream held until each sample is enqueued), and the same call's peers.
	best 3 'wgmma?tile_n=auto&schedule=auto&decode=prmt&tokens=once&overlap=pdl' \
		'wgmma?tile_n=auto&consumers=3&schedule=auto&decode=prmt&tokens=once&overlap=pdl' 135
	peers
	TITLE="wgmma best variants, gated timing, peers" summarize
	;;
prof3)
	# Issue 13 on this machine's cores (the server pinned to CPUs 0-1, the
	# load generator on 2-15: a generator that does not share the server's
	# cores); then where the three-consumer group tile's time goes (ncu,
	# bench1, the 192-row tile auto picks there); then the dual half of the
	# family test.
	if [ -x bin/loadbench ]; then
		step loadbench 200 loadbench.log taskset -c 2-15 ./bin/loadbench -web ./bin/web -scales 1 -modes overload \
			-overload-repeat 5 -d 4s -server-cpus 0,1
	fi
	NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
	G='wgmma?tile_n=auto&consumers=3&schedule=auto&decode=prmt&tokens=once&overlap=pdl'
	echo '[{"m":[80,176,128,72,64,248,96,160],"n":4096,"k":7168}]' >/tmp/g1.json
	M=sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_shared_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed.sum,sm__cycles_elapsed.max,lts__t_bytes.sum.per_second,lts__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sectors_srcunit_tex_op_read.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,smsp__average_warp_latency_issue_stalled_barrier.ratio,smsp__average_warp_latency_issue_stalled_wait.ratio,smsp__average_warp_latency_issue_stalled_long_scoreboard.ratio,smsp__average_warp_latency_issue_stalled_math_pipe_throttle.ratio
	step ncu_group "170" ncu_group.txt "$NCU" -k regex:wg_group_gemm --launch-skip 10 --launch-count 1 \
		--section SpeedOfLight --section SchedulerStats --section WarpStateStats --section MemoryWorkloadAnalysis --metrics "$M" \
		./bin/web bench --problem nvfp4_group_gemm --aa --baseline "$G" --shapes /tmp/g1.json \
		--device 0 --cache-dir "$C" --max-time 120s --json "$R/prof_group.json"
	family nvfp4_dual_gemm
	pack
	;;
final)
	# The best variants of the fixed build against the baseline, the same
	# call's peers, the compiler's report of what the best variants resolve
	# to on the benchmark shapes, then the dual half of the family test.
	B='wgmma?tile_n=auto&schedule=auto&decode=prmt&tokens=once'
	best "" "$B" "$B"
	peers
	TITLE="wgmma final call" summarize
	ptxas group_narrow_tok -DWG_TM=128 -DWG_MB=1 -DSTAGES=3 -DWG_RS=4 -DWG_DEC=1 -DWG_TOK=1
	ptxas group_wide_sk_tok -DWG_TM=128 -DWG_MB=2 -DSTAGES=2 -DWG_RS=4 -DWG_DEC=1 -DWG_TOK=1 -DWG_SK=1 -DWG_CREGS=224
	ptxas dual_narrow_tok -DDUAL=1 -DWG_TM=128 -DWG_MB=1 -DSTAGES=3 -DWG_RS=4 -DWG_DEC=1 -DWG_TOK=1
	ptxas dual_wide_tok -DDUAL=1 -DWG_TM=128 -DWG_MB=2 -DSTAGES=2 -DWG_RS=4 -DWG_DEC=1 -DWG_TOK=1 -DWG_CREGS=224
	grep -E "ptxas_|registers|spill|C75" "$OUT/ptxas.log"
	family nvfp4_dual_gemm
	;;
pdl)
	# Kernel-notes steps 15-16 on the group GEMM, each paired with the best
	# variant: the GEMM launched overlapped with wg_tokens, and three
	# consumer warpgroups. Resources and correctness first.
	B='wgmma?tile_n=auto&schedule=auto&decode=prmt&tokens=once'
	C3='wgmma?tile_n=192&consumers=3&registers=split&schedule=auto&decode=prmt&tokens=once'
	ptxas group_c3 -DWG_CONS=3 -DWG_CREGS=160 -DWG_TM=128 -DWG_MB=1 -DSTAGES=3 -DWG_RS=4 -DWG_DEC=1 -DWG_TOK=1
	ptxas group_c3_sk -DWG_CONS=3 -DWG_CREGS=160 -DWG_TM=128 -DWG_MB=1 -DSTAGES=3 -DWG_RS=4 -DWG_DEC=1 -DWG_TOK=1 -DWG_SK=1
	ptxsummary
	tests g_c3_tests nvfp4_group_gemm "$C3" "$B"
	tests g_pdl_tests nvfp4_group_gemm "$B&overlap=pdl" "$B"
	BENCH_MAX=110 bench g_pdl_vs_best nvfp4_group_gemm "$B&overlap=pdl" "$B"
	BENCH_MAX=110 bench g_c3_vs_best nvfp4_group_gemm "$C3" "$B"
	TITLE="wgmma overlap=pdl and consumers=3 (group)" summarize
	;;
pdl2)
	# Step 15 on the dual GEMM; the group steps combined; the peers.
	B='wgmma?tile_n=auto&schedule=auto&decode=prmt&tokens=once'
	G2='wgmma?tile_n=auto&consumers=3&schedule=auto&decode=prmt&tokens=once&overlap=pdl'
	tests d_pdl_tests nvfp4_dual_gemm "$B&overlap=pdl" "$B"
	tests g_c3pdl_tests nvfp4_group_gemm "$G2" "$B"
	BENCH_MAX=80 bench d_pdl_vs_best nvfp4_dual_gemm "$B&overlap=pdl" "$B"
	BENCH_MAX=150 bench g_c3pdl_vs_best nvfp4_group_gemm "$G2" "$B"
	peers
	TITLE="wgmma overlap=pdl (dual), the group steps combined, peers" summarize
	;;
final2)
	# Steps 15-16's rungs against the baseline, the builds they resolve to,
	# then the group half of the family test (the pair cover now holds
	# consumers=3 and overlap=pdl).
	best 2 'wgmma?tile_n=auto&schedule=auto&decode=prmt&tokens=once&overlap=pdl' \
		'wgmma?tile_n=auto&consumers=3&schedule=auto&decode=prmt&tokens=once&overlap=pdl' 140
	TITLE="wgmma steps 15-16 against the baseline" summarize
	ptxas group_c3_sk -DWG_CONS=3 -DWG_CREGS=160 -DWG_TM=128 -DWG_MB=1 -DSTAGES=3 -DWG_RS=4 -DWG_DEC=1 -DWG_TOK=1 -DWG_SK=1
	grep -E "ptxas_|registers|spill|C75" "$OUT/ptxas.log"
	family nvfp4_group_gemm
	;;
fit3 | fit64)
	# Kernel-notes step 17: tail tiles at their live width on the 192-row
	# tile, rounded up to 32 (fit3: tail_width=fit, four wgmma widths) or 64
	# (fit64: two). ptxas first: C7512 would serialize the widths' wgmmas,
	# and fit64 is then not benched (fit3 ran before that rule). Then
	# correctness, then paired with the best group variant.
	B='wgmma?tile_n=auto&consumers=3&schedule=auto&decode=prmt&tokens=once&overlap=pdl'
	V=fit WGFIT=1
	[ "$MODE" = fit64 ] && V=fit64 WGFIT=2
	F="$B&tail_width=$V"
	tok="-DWG_TM=128 -DWG_MB=1 -DSTAGES=3 -DWG_RS=4 -DWG_DEC=1 -DWG_TOK=1 -DWG_PDL=1 -DWG_FIT=$WGFIT"
	ptxas "group_c3_$V" -DWG_CONS=3 -DWG_CREGS=160 $tok
	ptxas "group_c3_${V}_sk" -DWG_CONS=3 -DWG_CREGS=160 $tok -DWG_SK=1
	ptxas "group_c2_$V" -DWG_CREGS=224 $tok
	ptxsummary
	if [ "$MODE" = fit64 ] && grep -q C7512 "$OUT/ptxas.log"; then
		echo "C7512: $V serialized; not benched" | tee -a "$OUT/steps.txt"
	else
		tests "g_${MODE}_tests" nvfp4_group_gemm "$F" "$B"
		BENCH_MAX=${FIT_MAX:-150} bench "g_${MODE}_vs_best" nvfp4_group_gemm "$F" "$B"
	fi
	TITLE="wgmma tail_width=$V on three consumers (group)" summarize
	;;
fit64b)
	# With fit64 a tail tile costs about half a whole one, so whole tiles
	# fill the last wave worse than their count says (bench1: 176 of 242
	# tiles are whole, and some block runs two of them). Stream-K against
	# whole tiles, paired; then the rungs against the baseline and the peers.
	F='wgmma?tile_n=auto&consumers=3&schedule=auto&decode=prmt&tokens=once&overlap=pdl&tail_width=fit64'
	S='wgmma?tile_n=auto&consumers=3&schedule=streamk&decode=prmt&tokens=once&overlap=pdl&tail_width=fit64'
	tests g_fit64sk_tests nvfp4_group_gemm "$S" "$F"
	BENCH_MAX=145 bench g_fit64sk_vs_fit64 nvfp4_group_gemm "$S" "$F"
	best 4 'wgmma?tile_n=auto&schedule=auto&decode=prmt&tokens=once&overlap=pdl' "$F" 140
	peers
	TITLE="wgmma fit64: stream-K, the rungs against the baseline, peers" summarize
	;;
hybrid)
	B='wgmma?tile_n=auto&consumers=3&schedule=auto&decode=prmt&tokens=once&overlap=pdl&tail_width=fit64'
	H='wgmma?tile_n=auto&consumers=3&schedule=hybrid&decode=prmt&tokens=once&overlap=pdl&tail_width=fit64'
	ptxas group_c3_fit64_hybrid -DWG_CONS=3 -DWG_CREGS=160 -DWG_TM=128 -DWG_MB=1 -DSTAGES=3 -DWG_RS=4 -DWG_DEC=1 -DWG_TOK=1 -DWG_PDL=1 -DWG_FIT=2 -DWG_SK=2
	ptxsummary
	tests g_hybrid_tests nvfp4_group_gemm "$H" "$B"
	BENCH_MAX=150 bench g_hybrid_vs_best nvfp4_group_gemm "$H" "$B"
	TITLE="wgmma schedule=hybrid (group)" summarize
	;;
hybrid2)
	G5='wgmma?tile_n=auto&consumers=3&schedule=autohybrid&decode=prmt&tokens=once&overlap=pdl&tail_width=fit64'
	tests g_ah_tests nvfp4_group_gemm "$G5" baseline
	best 5 'wgmma?tile_n=auto&schedule=auto&decode=prmt&tokens=once&overlap=pdl' "$G5" 140
	peers
	TITLE="wgmma schedule=autohybrid: the rungs against the baseline, peers" summarize
	family nvfp4_dual_gemm
	;;
hybrid5)
	G5='wgmma?tile_n=auto&consumers=3&schedule=autohybrid&decode=prmt&tokens=once&overlap=pdl&tail_width=fit64'
	PITCHTANK_FAMILY_SKIP=129 step family_g 300 family.log ./bin/engine.test -test.v -test.timeout 600s -test.run '^TestWgmmaFamily$/^nvfp4_group_gemm$'
	BENCH_MAX=140 bench g_best6 nvfp4_group_gemm "$G5"
	TITLE="wgmma schedule=autohybrid after the hybrid fix" summarize
	step family_d 600 family.log ./bin/engine.test -test.v -test.timeout 600s -test.run '^TestWgmmaFamily$/^nvfp4_dual_gemm$'
	;;
hybrid4)
	export PITCHTANK_FAMILY_SKIP=${SKIP:?set SKIP to the combinations already checked}
	family nvfp4_group_gemm
	;;
hybrid3 | fit64check)
	step resources 240 resources.log ./bin/engine.test -test.v -test.timeout 240s -test.run '^TestBestVariantResources$'
	grep -E 'wgmma|---|ok|FAIL' "$OUT/resources.log" | cut -c1-400
	family nvfp4_group_gemm
	;;
tm64)
	# Kernel-notes step 19: 64-token tiles paired with the best variant of
	# each problem, for a per-shape tile_m rule; then where the best dual
	# variant's time goes on bench2 (M512, the wide tile), one launch.
	G5='wgmma?tile_n=auto&consumers=3&schedule=autohybrid&decode=prmt&tokens=once&overlap=pdl&tail_width=fit64'
	D='wgmma?tile_n=auto&schedule=auto&decode=prmt&tokens=once&overlap=pdl'
	G64='wgmma?tile_m=64&tile_n=192&consumers=3&schedule=autohybrid&decode=prmt&tokens=once&overlap=pdl'
	BENCH_MAX=130 bench g_tm64_vs_best nvfp4_group_gemm "$G64" "$G5"
	BENCH_MAX=70 bench d_tm64w_vs_best nvfp4_dual_gemm 'wgmma?tile_m=64&tile_n=128&schedule=autohybrid&decode=prmt&tokens=once&overlap=pdl' "$D"
	BENCH_MAX=70 bench d_tm64n_vs_best nvfp4_dual_gemm 'wgmma?tile_m=64&tile_n=64&schedule=autohybrid&decode=prmt&tokens=once&overlap=pdl' "$D"
	TITLE="wgmma 64-token tiles against the best variants" summarize
	ncudual 170 "$D"
	pack
	;;
pf)
	# Kernel-notes step 20: the next piece's first weight copies issued
	# before this piece's epilogue (WG_PF). ptxas of the builds the best
	# variants resolve to, with and without it; correctness; paired with the
	# best of each problem; the family test's combinations with
	# prefetch=next; then the dual best without the overlap under ncu
	# (bench2: ncu failed to prepare the overlapped launch in call 1).
	G5='wgmma?tile_n=auto&consumers=3&schedule=autohybrid&decode=prmt&tokens=once&overlap=pdl&tail_width=fit64'
	D='wgmma?tile_n=auto&schedule=auto&decode=prmt&tokens=once&overlap=pdl'
	tok="-DWG_TM=128 -DWG_RS=4 -DWG_DEC=1 -DWG_TOK=1 -DWG_PDL=1"
	for pf in 0 1; do
		ptxas "group_c3_hybrid_pf$pf" $tok -DWG_MB=1 -DSTAGES=3 -DWG_CONS=3 -DWG_CREGS=160 -DWG_FIT=2 -DWG_SK=2 -DWG_PF=$pf
		ptxas "dual_wide_sk_pf$pf" $tok -DDUAL=1 -DWG_MB=2 -DSTAGES=2 -DWG_CREGS=224 -DWG_SK=1 -DWG_PF=$pf
		ptxas "dual_narrow_sk_pf$pf" $tok -DDUAL=1 -DWG_MB=1 -DSTAGES=3 -DWG_SK=1 -DWG_PF=$pf
	done
	ptxsummary
	tests g_pf_tests nvfp4_group_gemm "$G5&prefetch=next" "$G5"
	tests d_pf_tests nvfp4_dual_gemm "$D&prefetch=next" "$D"
	BENCH_MAX=140 bench g_pf_vs_best nvfp4_group_gemm "$G5&prefetch=next" "$G5"
	BENCH_MAX=70 bench d_pf_vs_best nvfp4_dual_gemm "$D&prefetch=next" "$D"
	TITLE="wgmma prefetch=next against the best variants" summarize
	knobfamily prefetch=next 240
	ncudual 150 'wgmma?tile_n=128&stages=2&registers=split&decode=prmt&tokens=once'
	pack
	;;
pf2)
	# After call 2: ncu could not profile a gated bench (it waits inside the
	# launch the held stream never starts), so bench --ungated and its device
	# test; then where the dual best's time goes on bench2 (M512 N4096, the
	# wide tile, whole); the SASS of two builds whose timing moved although
	# WG_PF cannot act there (one tile per block); the rung against the baseline.
	D='wgmma?tile_n=auto&schedule=auto&decode=prmt&tokens=once&overlap=pdl'
	G6='wgmma?tile_n=auto&consumers=3&schedule=autohybrid&decode=prmt&tokens=once&overlap=pdl&tail_width=fit64&prefetch=next'
	step ungated 120 ungated.log ./bin/bench.test -test.v -test.run '^TestCLIUngated$'
	grep -E -- '^(---|ok|FAIL)|cli_test' "$OUT/ungated.log" | head
	ncudual 150 "$D" --ungated
	if command -v cuobjdump >/dev/null; then
		tok="-DWG_TM=128 -DWG_RS=4 -DWG_DEC=1 -DWG_TOK=1 -DWG_PDL=1 -DWG_MB=1 -DSTAGES=3"
		for pf in 0 1; do
			for b in "dual_narrow:-DDUAL=1" "group_c2_fit64:-DWG_CREGS=224 -DWG_FIT=2"; do
				n=${b%%:*}
				nvcc -cubin -gencode=arch=compute_90a,code=sm_90a $tok ${b#*:} -DWG_PF=$pf -o /tmp/s.cubin kernels/cuda/wg_group_gemm.cu &&
					cuobjdump -sass /tmp/s.cubin >"$R/sass_${n}_pf$pf.txt"
			done
		done
		ls -la "$R"/sass_* | tee -a "$OUT/steps.txt"
	fi
	BENCH_MAX=140 bench g_best7 nvfp4_group_gemm "$G6"
	TITLE="wgmma prefetch=next: the rung against the baseline; ncu of the dual best" summarize
	pack
	;;
pf3)
	# The group baseline's modules compile cold on a fresh machine (NVRTC 13,
	# about 20 s each): call 3's 140 s ran out before shape 4.
	best 8 'wgmma?tile_n=auto&schedule=auto&decode=prmt&tokens=once&overlap=pdl&prefetch=next' \
		'wgmma?tile_n=auto&consumers=3&schedule=autohybrid&decode=prmt&tokens=once&overlap=pdl&tail_width=fit64&prefetch=next' 230
	TITLE="wgmma prefetch=next: the rungs against the baseline" summarize
	;;
verify)
	# wg_pieces was rewritten for WG_PF (the stream-K modules' instruction
	# order changed): the whole family test again. A first call runs the
	# watchdog's test and the group half; SKIP=N resumes the group half
	# where the first call's cap cut it, then runs the dual half.
	if [ -z "${SKIP:-}" ]; then
		step watchdog 120 watchdog.log ./bin/engine.test -test.v -test.run '^TestHangWatchdog$'
		grep -E -- '^(---|ok|FAIL)|HUNG' "$OUT/watchdog.log" | head
		family nvfp4_group_gemm
	else
		PITCHTANK_FAMILY_SKIP=$SKIP step family_g 400 family.log ./bin/engine.test -test.v -test.timeout 600s -test.run '^TestWgmmaFamily$/^nvfp4_group_gemm$'
		step family_d 600 family.log ./bin/engine.test -test.v -test.timeout 600s -test.run '^TestWgmmaFamily$/^nvfp4_dual_gemm$'
		grep -E -- "^(=== RUN|--- |ok|FAIL|PASS)|combinations|WRONG|HUNG" "$OUT/family.log" | tail -12
	fi
	pack
	;;
ready)
	# Kernel-notes step 21: the producer waits per stage on the token
	# pass's ready counts (WG_RDY) instead of for the whole pass.
	G5='wgmma?tile_n=auto&consumers=3&schedule=autohybrid&decode=prmt&tokens=once&overlap=pdl&tail_width=fit64'
	D='wgmma?tile_n=auto&schedule=auto&decode=prmt&tokens=once&overlap=pdl'
	GR=${G5/overlap=pdl/overlap=ready}
	DR=${D/overlap=pdl/overlap=ready}
	tok="-DWG_TM=128 -DWG_RS=4 -DWG_DEC=1 -DWG_TOK=1 -DWG_PDL=1 -DWG_RDY=1"
	ptxas group_c3_hybrid_rdy $tok -DWG_MB=1 -DSTAGES=3 -DWG_CONS=3 -DWG_CREGS=160 -DWG_FIT=2 -DWG_SK=2
	ptxas group_c2_fit64_rdy $tok -DWG_MB=1 -DSTAGES=3 -DWG_CREGS=224 -DWG_FIT=2
	ptxas dual_wide_rdy $tok -DDUAL=1 -DWG_MB=2 -DSTAGES=2 -DWG_CREGS=224
	ptxas dual_narrow_sk_rdy $tok -DDUAL=1 -DWG_MB=1 -DSTAGES=3 -DWG_SK=1
	ptxsummary
	tests g_rdy_tests nvfp4_group_gemm "$GR" "$G5"
	tests d_rdy_tests nvfp4_dual_gemm "$DR" "$D"
	BENCH_MAX=140 bench g_rdy_vs_best nvfp4_group_gemm "$GR" "$G5"
	BENCH_MAX=70 bench d_rdy_vs_best nvfp4_dual_gemm "$DR" "$D"
	TITLE="wgmma overlap=ready against the best variants" summarize
	knobfamily overlap=ready 200
	pack
	;;
fold)
	# Kernel-notes step 22: four dual consumers, two per product, no
	# producer warpgroup (WG_FOLD), against the two-consumer wide tile on
	# whole tiles (the same 128-column tile: the structure alone) and
	# against the best dual variant.
	D='wgmma?tile_n=auto&schedule=auto&decode=prmt&tokens=once&overlap=pdl'
	W='wgmma?tile_n=128&stages=2&registers=split&decode=prmt&tokens=once&overlap=pdl'
	F='wgmma?tile_n=128&stages=2&decode=prmt&tokens=once&overlap=pdl&consumers=4&producer=folded'
	tok="-DDUAL=1 -DWG_TM=128 -DWG_RS=4 -DWG_DEC=1 -DWG_TOK=1 -DWG_PDL=1 -DSTAGES=2"
	ptxas dual_fold $tok -DWG_CONS=4 -DWG_MB=1 -DWG_FOLD=1
	ptxas dual_fold_pf $tok -DWG_CONS=4 -DWG_MB=1 -DWG_FOLD=1 -DWG_PF=1
	ptxas dual_wide $tok -DWG_MB=2 -DWG_CREGS=224
	ptxsummary
	tests d_fold_tests nvfp4_dual_gemm "$F" "$W"
	BENCH_MAX=100 bench d_fold_vs_wide nvfp4_dual_gemm "$F" "$W"
	BENCH_MAX=100 bench d_fold_vs_best nvfp4_dual_gemm "$F" "$D"
	TITLE="wgmma consumers=4 (dual) against the two-consumer wide tile and the best" summarize
	knobfamily consumers=4 150 '^TestWgmmaFamily$/^nvfp4_dual_gemm$'
	pack
	;;
foldprof)
	# Why four dual consumers lost to two (step 22): the same 128-column
	# tile on whole tiles, bench2, one launch each under ncu.
	# ${3:-four}: four = four consumers against two (call 4); wide = two
	# consumers folded against a producer warpgroup (call 7).
	if [ "${3:-four}" = wide ]; then
		ncudual 200 'wgmma?tile_n=128&stages=2&decode=prmt&tokens=once&overlap=pdl&producer=folded' --ungated
	else
		ncudual 200 'wgmma?tile_n=128&stages=2&decode=prmt&tokens=once&overlap=pdl&consumers=4&producer=folded' --ungated
	fi
	ncudual 200 'wgmma?tile_n=128&stages=2&registers=split&decode=prmt&tokens=once&overlap=pdl' --ungated
	pack
	;;
fold2)
	# Step 22, second run: the producer folded into consumer 0 on two
	# consumers (256 threads, 248 registers each, no setmaxnreg), against
	# the same tiles with a producer warpgroup; whole tiles.
	foldvars
	ptxas dual_fold_wide $tok -DWG_MB=2 -DSTAGES=2
	ptxas dual_fold_narrow $tok -DWG_MB=1 -DSTAGES=3
	ptxsummary
	tests d_fold2_tests nvfp4_dual_gemm "$FW" "$W"
	BENCH_MAX=100 bench d_fold2_wide nvfp4_dual_gemm "$FW" "$W"
	BENCH_MAX=100 bench d_fold2_narrow nvfp4_dual_gemm "$N&producer=folded" "$N"
	TITLE="wgmma producer=folded (dual, two consumers) against a producer warpgroup" summarize
	knobfamily producer=folded 150 '^TestWgmmaFamily$/^nvfp4_dual_gemm$'
	pack
	;;
fold3)
	# Step 22, third run: the folded producer's release counted per stage
	# (the last consumer refills it, nobody waits): two consumers against a
	# producer warpgroup on both tiles, four consumers against the
	# two-consumer wide tile; whole tiles.
	foldvars
	ptxas dual_fold_wide $tok -DWG_MB=2 -DSTAGES=2
	ptxas dual_fold_four $tok -DWG_MB=1 -DSTAGES=2 -DWG_CONS=4
	ptxsummary
	tests d_fold3_tests nvfp4_dual_gemm "$FW" "$W"
	BENCH_MAX=80 bench d_fold3_wide nvfp4_dual_gemm "$FW" "$W"
	BENCH_MAX=80 bench d_fold3_four nvfp4_dual_gemm "$FW&consumers=4" "$W"
	BENCH_MAX=80 bench d_fold3_narrow nvfp4_dual_gemm "$N&producer=folded" "$N"
	TITLE="wgmma producer=folded, counted release (dual) against a producer warpgroup" summarize
	knobfamily producer=folded 150 '^TestWgmmaFamily$/^nvfp4_dual_gemm$'
	pack
	;;
foldsrc)
	# Where the folded producer's 10% goes: stall samples per SASS line
	# (ncu source counters) of the narrow tile, folded and with a producer
	# warpgroup, on bench2 (256 whole tiles), one launch each.
	NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
	N='wgmma?decode=prmt&tokens=once&overlap=pdl'
	echo '[{"m":[512],"n":4096,"k":7168}]' >/tmp/b2.json
	for v in "nf|$N&producer=folded" "np|$N"; do
		name=${v%%|*}
		step "ncu_src_$name" 150 ncu.log "$NCU" -k regex:wg_dual_gemm --launch-skip 10 --launch-count 1 \
			--section WarpStateStats --section SourceCounters --section SchedulerStats --import-source no -f -o "/tmp/prof_$name" \
			./bin/web bench --problem nvfp4_dual_gemm --aa --baseline "${v#*|}" --ungated --shapes /tmp/b2.json \
			--device 0 --cache-dir "$C" --max-time 100s --json "$R/prof_$name.json"
		step "ncu_page_$name" 60 ncu.log sh -c "\"$NCU\" -i /tmp/prof_$name.ncu-rep --page source --csv --print-source sass >\"$OUT/src_$name.csv\""
		step "ncu_details_$name" 60 ncu.log sh -c "\"$NCU\" -i /tmp/prof_$name.ncu-rep --page details >\"$OUT/details_$name.txt\""
	done
	pack
	;;
foldcursor)
	# Step 23, the kept form: the refill from a cursor in the kernel itself
	# (bin/web, bin/engine.test): resources, the family test's folded
	# combinations, tests, paired with a producer warpgroup and four
	# consumers against the two-consumer wide tile.
	foldvars
	ptxas fold_wide $tok -DWG_MB=2 -DSTAGES=2
	ptxas fold_narrow $tok -DWG_MB=1 -DSTAGES=3
	ptxas fold_four $tok -DWG_MB=1 -DSTAGES=2 -DWG_CONS=4
	ptxsummary
	knobfamily producer=folded 200 '^TestWgmmaFamily$/^nvfp4_dual_gemm$'
	tests d_fc_tests nvfp4_dual_gemm "$FW" "$W"
	tests d_fc_four_tests nvfp4_dual_gemm "$FW&consumers=4" "$W"
	BENCH_MAX=60 bench d_fc_wide nvfp4_dual_gemm "$FW" "$W"
	BENCH_MAX=60 bench d_fc_four nvfp4_dual_gemm "$FW&consumers=4" "$W"
	BENCH_MAX=60 bench d_fc_narrow nvfp4_dual_gemm "$N&producer=folded" "$N"
	TITLE="wgmma producer=folded, the refill from a cursor, against a producer warpgroup" summarize
	pack
	;;
chunkmarks)
	# Step 24: consumer 0's way through each chunk (WG_STAMP's marks), the
	# dual tiles on bench2 and the group's three-consumer tile on bench1,
	# whole tiles (the stamps are printed after a block barrier that
	# stream-K's early returns would break). bin/web_stamp from expbuild.sh.
	unpackexp
	foldvars
	echo '[{"m":[512],"n":4096,"k":7168}]' >/tmp/b2.json
	echo '[{"m":[80,176,128,72,64,248,96,160],"n":4096,"k":7168}]' >/tmp/g1.json
	stampbench w ./bin/web_stamp "$W"
	stampbench n ./bin/web_stamp "$N"
	stampbench f4 ./bin/web_stamp "$FW&consumers=4"
	stampbench g3 ./bin/web_stamp 'wgmma?tile_n=auto&tail_width=fit64&decode=prmt&tokens=once&overlap=pdl&consumers=3' \
		nvfp4_group_gemm /tmp/g1.json
	python3 dev/gpucall/stamps.py "$OUT"/stamp_*.txt >"$OUT/stamps.md"
	grep -v '^| stamp' "$OUT/stamps.md"
	pack
	;;
chunkmarks3)
	# Step 24, second and third runs: is a consumer's wgmma issue slow
	# because the tensor pipe also serves the other consumer?
	# bin/web_stampx (WG_STAMP=1, WG_EXP=16: only consumer 0 issues wgmmas;
	# wrong sums, so the bench stops at its first check: the stamps are
	# printed at the module's launches 0 and 2 too) against bin/web_stamp,
	# both dual tiles; the SM clock (WGCLOCK) and every block's span
	# (WGSPAN) of W, N and four consumers. (The second run, chunkmarks2 at
	# e0755ed, printed no launch 0.)
	unpackexp
	foldvars
	echo '[{"m":[512],"n":4096,"k":7168}]' >/tmp/b2.json
	stampbench w ./bin/web_stamp "$W"
	stampbench wx ./bin/web_stampx "$W"
	stampbench n ./bin/web_stamp "$N"
	stampbench nx ./bin/web_stampx "$N"
	stampbench f4 ./bin/web_stamp "$FW&consumers=4"
	python3 dev/gpucall/stamps.py --launch 0 "$OUT"/stamp_*.txt >"$OUT/stamps0.md"
	python3 dev/gpucall/stamps.py --launch 2 "$OUT"/stamp_*.txt >"$OUT/stamps2.md"
	python3 dev/gpucall/stamps.py "$OUT"/stamp_*.txt >"$OUT/stamps.md"
	grep -v '^| stamp' "$OUT/stamps0.md"
	grep -E 'blocks|SM clock' "$OUT/stamps.md"
	pack
	;;
ssa)
	# Step 25's next run: weights=shared (WG_SSA: the producer warpgroup
	# decodes the weights into shared memory, SS wgmmas). ptxas first (a
	# serialization warning or a spill ends the idea early), the probe's
	# OWN form, tests, then paired with the same tile with register weights
	# (S2) and with the best variant, dual then group, then its family
	# combinations (both problems; bin/engine.test).
	bestvars
	SS="$S2&weights=shared"
	ptxas ssa -DDUAL=1 -DWG_TM=128 -DWG_MB=1 -DSTAGES=2 -DWG_RS=4 -DWG_DEC=1 -DWG_TOK=1 -DWG_PDL=1 -DWG_SSA=1
	ptxsummary
	probebuild
	step roles 60 wgprobe.txt /tmp/wgprobe roles
	grep -E "^roles|C751" "$OUT/wgprobe.txt"
	# The group's narrow tile is the same spec (tile_n=128 is its default).
	narrowpair ssa "$SS"
	TITLE="weights=shared (the producer decodes the weights into shared memory) against register weights on the same tile and against the best variant, both problems" summarize
	grep -E '^Geomean|^## ' "$OUT/summary.md"
	knobfamily weights=shared 150
	pack
	;;
staged)
	# Step 27: weights=staged (WG_CSA: each consumer decodes its own weight
	# rows into fp16 A buffers in shared memory, SS wgmmas): ptxas, tests,
	# paired with the same tile with register weights and with the best,
	# both problems, then its family combinations.
	bestvars
	ST="$S2&weights=staged"
	ptxas staged -DDUAL=1 -DWG_TM=128 -DWG_MB=1 -DSTAGES=2 -DWG_RS=4 -DWG_DEC=1 -DWG_TOK=1 -DWG_PDL=1 -DWG_CSA=1
	ptxas gstaged -DDUAL=0 -DWG_TM=128 -DWG_MB=1 -DSTAGES=2 -DWG_RS=4 -DWG_DEC=1 -DWG_TOK=1 -DWG_PDL=1 -DWG_CSA=1
	ptxsummary
	narrowpair st "$ST"
	TITLE="weights=staged (each consumer decodes its weights into shared memory) against register weights on the same tile and the best variants" summarize
	knobfamily weights=staged 100
	pack
	;;
issueq)
	# Step 27's next step: how far a warpgroup's wgmma issue runs ahead of
	# the pipe (dev/wgprobe issue: the cycles to each of a chain's eight
	# issues returning, RS and SS, one and two warpgroups).
	probebuild
	step issue 60 wgprobe.txt /tmp/wgprobe issue
	grep -E "^issue|C751|rror" "$OUT/wgprobe.txt"
	pack
	;;
stagedmarks)
	# Step 27's next step: where a weights=staged chunk spends its time
	# (WG_STAMP marks 5-8 of both consumers; stamps.py --staged), with the
	# same tile with register weights beside it, bench2.
	# Build: bash dev/gpucall/expbuild.sh stamp WG_STAMP=1.
	unpackexp
	bestvars
	stampbench st ./bin/web_stamp "$S2&weights=staged"
	stampbench s2 ./bin/web_stamp "$S2"
	python3 dev/gpucall/stamps.py --launch 0 --staged "$OUT/stamp_st.txt" | tee "$OUT/marks.txt"
	python3 dev/gpucall/stamps.py --launch 0 "$OUT/stamp_s2.txt" | tee -a "$OUT/marks.txt"
	pack
	;;
ssaprof)
	# Step 26: what paces weights=shared: ncu of its dual narrow tile and
	# of the same tile with register weights, bench2, one launch each;
	# shared-memory bank conflicts besides ncudual's pipes and stalls.
	# (Call 4 also ran decoders=2, whose source is at c8eb62e.)
	bestvars
	export NCU_EXTRA=l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,smsp__inst_executed_pipe_lsu.sum,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_elapsed
	for v in "$S2&weights=shared" "$S2"; do
		echo "### $v" >>"$OUT/ncu_dual.txt"
		ncudual 150 "$v" --ungated
	done
	grep -E "^###|Duration|pipe_|bank_conflicts|wavefronts|inst_executed|stalled_(barrier|wait|long|math|short|mio)" "$OUT/ncu_dual.txt" | tee "$OUT/ssaprof.txt"
	pack
	;;
overlap)
	# Step 25's next run: both dual consumers' marks (WG_STAMP builds since
	# step 25 record consumer 1's too): when each issues, and the cycles per
	# chunk in which both, one or neither is issuing; W and N on bench2, the
	# group's three-consumer tile on bench1 (its consumers 0 and 1).
	# Build: bash dev/gpucall/expbuild.sh stamp WG_STAMP=1.
	unpackexp
	foldvars
	bestvars
	G3='wgmma?tile_n=auto&tail_width=fit64&decode=prmt&tokens=once&overlap=pdl&consumers=3'
	stampbench w ./bin/web_stamp "$W"
	stampbench n ./bin/web_stamp "$N"
	stampbench g ./bin/web_stamp "$G3" nvfp4_group_gemm /tmp/g1.json
	for f in "$OUT"/stamp_*.txt; do
		python3 dev/gpucall/stamps.py --launch 0 "$f" | grep -v '^| stamp'
	done | tee "$OUT/overlap.txt"
	pack
	;;
pp)
	# Step 25: the dual consumers taking turns issuing their halves (WG_PP=1,
	# whole tiles). Builds (expbuild.sh): web_pp (WG_PP=1), web_stamppp
	# (WG_STAMP=1 WG_PP=1), web_stamp, and bin/web. Tests, then W and N
	# paired with the baseline in both builds, then block 0's cycles.
	unpackexp
	foldvars
	WEB=./bin/web_pp tests pp_wtests nvfp4_dual_gemm "$W" baseline
	WEB=./bin/web_pp tests pp_ntests nvfp4_dual_gemm "$N" baseline
	WEB=./bin/web_pp BENCH_MAX=70 bench pp_n nvfp4_dual_gemm "$N"
	BENCH_MAX=70 bench plain_n nvfp4_dual_gemm "$N"
	WEB=./bin/web_pp BENCH_MAX=70 bench pp_w nvfp4_dual_gemm "$W"
	BENCH_MAX=70 bench plain_w nvfp4_dual_gemm "$W"
	echo '[{"m":[512],"n":4096,"k":7168}]' >/tmp/b2.json
	for b in "" pp; do
		stampbench "w$b" "./bin/web_stamp$b" "$W"
		stampbench "n$b" "./bin/web_stamp$b" "$N"
	done
	for f in "$OUT"/stamp_*.txt; do
		echo "== $(basename "$f")"
		python3 dev/gpucall/stamps.py --launch 0 "$f" | grep -v '^| stamp'
	done | tee "$OUT/pp.txt"
	TITLE="WG_PP (the dual consumers take turns issuing halves) against the plain build, each paired with the baseline" summarize
	grep -E '^Geomean|^## ' "$OUT/summary.md"
	pack
	;;
pw2)
	# Step 28, second call: prefetch=producer with one empty-barrier arrival
	# per warp: ptxas of its modules (the group's three consumers leave the
	# producer 32 registers), tests and paired benches against the best
	# variants, and the marks of the dual wide tile and the group's
	# three-consumer tile with and without it.
	# Builds: bin/web, bin/engine.test; bash dev/gpucall/expbuild.sh stamp WG_STAMP=1.
	unpackexp
	bestvars
	foldvars
	G3='wgmma?tile_n=auto&tail_width=fit64&decode=prmt&tokens=once&overlap=pdl&consumers=3'
	ptxas gpw $GDEFS -DWG_PW=1
	ptxas dwpw $DWDEFS -DWG_PW=1
	ptxas dnpw -DDUAL=1 -DSTAGES=3 -DWG_CONS=2 -DWG_DEC=1 -DWG_MB=1 -DWG_PDL=1 -DWG_RS=4 -DWG_TM=128 -DWG_TOK=1 -DWG_PW=1
	ptxsummary
	pwpair
	stampbench w ./bin/web_stamp "$W"
	stampbench wpw ./bin/web_stamp "$W&prefetch=producer"
	stampbench g ./bin/web_stamp "$G3" nvfp4_group_gemm /tmp/g1.json
	stampbench gpw ./bin/web_stamp "$G3&prefetch=producer" nvfp4_group_gemm /tmp/g1.json
	for f in "$OUT"/stamp_w.txt "$OUT"/stamp_wpw.txt "$OUT"/stamp_g.txt "$OUT"/stamp_gpw.txt; do
		python3 dev/gpucall/stamps.py --launch 0 "$f" | grep -v '^| stamp'
	done | tee "$OUT/pwmarks.txt"
	TITLE="prefetch=producer (WG_PW), per-warp release, against the best variants" summarize
	pack
	;;
pw3)
	# Step 28, calls 6-7: prefetch=producer with the copies coalesced as the
	# consumers issued them (four threads per row): ptxas of the group's
	# and the wide dual tile's modules (call 7), tests and paired benches
	# against the best variants, its family combinations.
	# Builds: bin/web, bin/engine.test.
	bestvars
	ptxas gpw $GDEFS -DWG_PW=1
	ptxas dwpw $DWDEFS -DWG_PW=1
	ptxas dw $DWDEFS
	ptxsummary
	pwpair
	TITLE="prefetch=producer (WG_PW), coalesced copies, against the best variants" summarize
	knobfamily prefetch=producer 200
	pack
	;;
pwg2)
	# Step 28's last call: prefetch=producer on the group's two-consumer
	# tiles (whose producer keeps 168 or 56 registers, where the three
	# consumers' 32 spill), paired with the group's best (three consumers),
	# and the same tiles without it; then the PyTorch peers.
	# Builds: bin/web.
	bestvars
	G2='wgmma?tile_n=auto&tail_width=fit64&schedule=autohybrid&decode=prmt&tokens=once&overlap=pdl'
	tests g2pw_tests nvfp4_group_gemm "$G2&prefetch=producer" "$G"
	BENCH_MAX=130 bench g2pw nvfp4_group_gemm "$G2&prefetch=producer" "$G"
	BENCH_MAX=130 bench g2 nvfp4_group_gemm "$G2" "$G"
	TITLE="prefetch=producer on the group's two-consumer tiles against the group's best" summarize
	peers
	pack
	;;
pwg3)
	# Step 28, call 9: the group's three consumers with prefetch=producer at
	# 152 registers each, leaving the producer 56: ptxas (the spill), tests,
	# paired with the group's best.
	# Builds: bin/web.
	bestvars
	ptxas gpw152 ${GDEFS/WG_CREGS=160/WG_CREGS=152} -DWG_PW=1
	ptxsummary
	tests g_pw_tests nvfp4_group_gemm "$G&prefetch=producer" "$G"
	BENCH_MAX=130 bench g_pw nvfp4_group_gemm "$G&prefetch=producer" "$G"
	TITLE="prefetch=producer, three group consumers at 152 registers, against the group's best" summarize
	pack
	;;
ablmarks)
	# Eleventh session: where the chunk's time goes when a part of the
	# consumers' work is taken out (step 25's ablation, whose whole-launch
	# clocks did not add up): consumer 0 and 1's marks on the dual narrow
	# tile, bench2, in the full WG_STAMP build and WG_EXP 2 (no weight
	# decode), 8 (no copies, no decode) and 32 (no weight copies).
	# Builds: bash dev/gpucall/expbuild.sh stamp WG_STAMP=1, and stampe2,
	# stampe8, stampe32 with WG_STAMP=1 WG_EXP=2, 8, 32.
	unpackexp
	foldvars
	echo '[{"m":[512],"n":4096,"k":7168}]' >/tmp/b2.json
	for b in "" e2 e8 e32; do
		stampbench "n$b" "./bin/web_stamp$b" "$N"
	done
	for f in "$OUT"/stamp_*.txt; do
		echo "== $(basename "$f")"
		python3 dev/gpucall/stamps.py --launch 0 "$f"
	done | tee "$OUT/ablmarks.txt"
	pack
	;;
ablate)
	# Step 25: block 0's SM clock over a whole launch (WGCLOCK) and every
	# block's span (WGSPAN) with parts of the consumers' work taken out, on
	# bench2 (dual W and N) and bench1 (the group's three-consumer tile),
	# whole tiles. Builds (expbuild.sh, all WG_STAMP=1): web_stamp, and
	# web_stampe2 / e4 / e8 with WG_EXP=2 (no weight decode: raw words as
	# fragments), 4 (no wgmma issued) and 8 (no copies and no decode: the
	# ring's barriers and the wgmmas alone). The WG_EXP builds give wrong
	# sums, so their bench stops at its first check: launch 0 is compared.
	# ABL="e32 e64" (second run): WG_EXP=32 (no weight copies) and 64 (the
	# copies issued, never waited for).
	unpackexp
	foldvars
	echo '[{"m":[512],"n":4096,"k":7168}]' >/tmp/b2.json
	echo '[{"m":[80,176,128,72,64,248,96,160],"n":4096,"k":7168}]' >/tmp/g1.json
	G3='wgmma?tile_n=auto&tail_width=fit64&decode=prmt&tokens=once&overlap=pdl&consumers=3'
	for b in "" ${ABL:-e2 e4 e8}; do
		stampbench "w$b" "./bin/web_stamp$b" "$W"
		stampbench "n$b" "./bin/web_stamp$b" "$N"
		stampbench "g$b" "./bin/web_stamp$b" "$G3" nvfp4_group_gemm /tmp/g1.json
	done
	stampclocks ablate.txt
	pack
	;;
roles)
	# Step 25: one warpgroup issues wgmmas (the GEMMs' four-per-group form,
	# or one per group) while 0-3 others run decode-like ALU work
	# (dev/wgprobe/probe.cu, `roles`); the SASS of the issuing loop.
	probebuild
	step roles 120 wgprobe.txt /tmp/wgprobe roles
	# The same wgmmas on zeros, random fp16 and FP4 values (data).
	step data 120 wgprobe.txt /tmp/wgprobe data
	grep -E "^roles|C751|zeros|random|fp4|walk" "$OUT/wgprobe.txt"
	cuobjdump -sass /tmp/wgprobe 2>/dev/null | awk '/Function/{f=$0} f ~ /roles/' >"$OUT/roles_sass.txt"
	grep -E 'Function|HGMMA|WARPGROUP' "$OUT/roles_sass.txt" | head -40
	pack
	;;
instmix)
	# Step 25: where the issued instructions go. ncu source counters
	# (instructions executed per SASS line) of
	# the best dual variant on bench2 and the best group variant on bench1,
	# one launch each; and the probe's SASS, grouped and one group per wgmma.
	NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
	bestvars
	for v in "d|nvfp4_dual_gemm|$D|b2|wg_dual_gemm" "g|nvfp4_group_gemm|$G|g1|wg_group_gemm"; do
		IFS='|' read -r name prob var shp kern <<<"$v"
		ncubench "mix_$name" 150 ncu.log "$prob" "$var" "/tmp/$shp.json" -k "regex:^$kern\$" \
			--launch-skip 10 --launch-count 1 --section SourceCounters --section InstructionStats \
			--section ComputeWorkloadAnalysis --section SpeedOfLight --import-source no -f -o "/tmp/mix_$name"
		step "ncu_page_$name" 60 ncu.log sh -c "\"$NCU\" -i /tmp/mix_$name.ncu-rep --page source --csv --print-source sass >\"$OUT/mix_$name.csv\""
		step "ncu_details_$name" 60 ncu.log sh -c "\"$NCU\" -i /tmp/mix_$name.ncu-rep --page details >\"$OUT/mixdetails_$name.txt\""
	done
	if command -v nvcc >/dev/null; then
		step probe_cubin 120 probe_sass.txt nvcc -cubin -gencode=arch=compute_90a,code=sm_90a -O3 -o /tmp/probe.cubin dev/wgprobe/probe.cu
		step probe_sass 60 probe_sass.txt cuobjdump -sass /tmp/probe.cubin
	fi
	gzip -9 "$OUT"/mix_*.csv "$OUT/probe_sass.txt"
	pack
	;;
mix24)
	# Session 24: where the group best's instructions go (step 25's
	# instmix form on the best since session 22): ncu source counters of GW,
	# one launch each on bench3 (two-consumer whole tiles) and bench1
	# (three consumers, hybrid stream-K), as CSV per SASS line.
	NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
	bestvars
	benchshapes
	for v in "g3|tl_g3" "g1|tl_g1"; do
		IFS='|' read -r name shp <<<"$v"
		ncubench "mix_$name" 150 ncu.log nvfp4_group_gemm "$GW" "/tmp/$shp.json" -k "regex:^wg_group_gemm\$" \
			--launch-skip 10 --launch-count 1 --section SourceCounters --section InstructionStats \
			--section SpeedOfLight --import-source no -f -o "/tmp/mix_$name"
		step "ncu_page_$name" 60 ncu.log sh -c "\"$NCU\" -i /tmp/mix_$name.ncu-rep --page source --csv --print-source sass >\"$OUT/mix_$name.csv\""
	done
	gzip -9 "$OUT"/mix_*.csv
	pack
	;;
wgprobe)
	# Step 24: how long a warpgroup takes to issue m64n128k16 wgmmas, A from
	# registers or shared memory, one to four warpgroups per SM, with ALU
	# work between them (dev/wgprobe/probe.cu, built here with nvcc).
	probebuild
	step wgprobe 200 wgprobe.txt /tmp/wgprobe
	grep -E "cycles per wgmma|SMs|wgprobe:|C75" "$OUT/wgprobe.txt"
	pack
	;;
prof25)
	# Session 25, call 5: ncu, one launch each at the card's own clocks
	# (--clock-control none), of DT on dual bench4 (tall tiles, stream-K)
	# and bench2 (tall, whole tiles) and of GW on group bench3 (two-consumer
	# whole tiles) and bench1 (three consumers, hybrid): duration, SM clock,
	# active cycles over the SMs, instructions, issue and tensor-pipe
	# activity. Builds: bin/web.
	bestvars
	benchshapes
	m=gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,sm__cycles_active.min,sm__cycles_active.avg,sm__cycles_active.max,sm__cycles_elapsed.max,sm__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active
	for x in "d4 nvfp4_dual_gemm tl_b4 $DT wg_dual_gemm" "d2 nvfp4_dual_gemm tl_b2 $DT wg_dual_gemm" "g3 nvfp4_group_gemm tl_g3 $GW ^wg_group_gemm\$" "g1 nvfp4_group_gemm tl_g1 $GW ^wg_group_gemm\$"; do
		set -- $x
		echo "### $1" >>"$OUT/ncu25.txt"
		NCU_MAX=40 ncubench "ncu_$1" 90 ncu25.txt "$2" "$4" "/tmp/$3.json" -k "regex:$5" --clock-control none \
			--launch-skip 10 --launch-count 1 --metrics "$m"
	done
	grep -E "^###|gpu__time|sm__cycles|sm__inst|issue_active|pipe_" "$OUT/ncu25.txt" >"$OUT/prof25.txt"
	cat "$OUT/prof25.txt"
	pack
	;;
tlb25)
	# Session 25, calls 7-8: every block's WG_TL marks and SM at launch 30
	# (bin/web_tl2.gz: expbuild.sh tl2 WG_TL=2) for DT on dual bench4
	# (tall tiles, stream-K) and bench2 (tall, whole tiles), into
	# $OUT/tl_marks.txt (tlruns): where bench4's blocks spend the cycles its
	# chunks do not explain (call 5). Builds: bin/web_tl2.gz.
	bestvars
	unpackexp
	benchshapes
	tlruns tl2 "d4 nvfp4_dual_gemm b4 $DT" "d2 nvfp4_dual_gemm b2 $DT"
	pack
	;;
sass26)
	# Kernel-notes "Where session 26 leaves issue 11" (1), run as session
	# 27's call 1: the SASS of every module a short A/A bench of each best compiles
	# (cuobjdump -sass of the cache's cubins, with each one's ptxas report),
	# for the chunk loops' comparison, which is done here on the returned
	# text: `go run ./dev/ptxloop -sass sass/*.sass` counts each loop by
	# opcode, and files are named by cache key (`go run ./dev/ptxloop -keys
	# 13.0` names each benchmark shape's module).
	bestvars
	benchshapes
	step d_short 100 short.log ./bin/web bench --problem nvfp4_dual_gemm --aa --baseline "$DT" \
		--device 0 --cache-dir "$C" --max-time 80s --json "$R/d_short.json"
	peers # the kept build's dual medians beside the peers of the same call
	for g in g2 g3; do # the hybrid module (bench2) and the whole-tile one (bench3)
		step "${g}_short" 70 short.log ./bin/web bench --problem nvfp4_group_gemm --aa --baseline "$GW" \
			--shapes "/tmp/tl_$g.json" --device 0 --cache-dir "$C" --max-time 50s --json "$R/${g}_short.json"
	done
	sassdump
	pack
	;;
cpn)
	# Step 76 (kernel-notes): the weight copies' byte counts kept opaque
	# too. bin/web has it; bin/web_ref.gz is step 75's commit (expbuild.sh
	# ref from that commit's tree). Tests in the new build; A/A medians of
	# DT alternated on every dual benchmark shape (twice each); the peers;
	# GW on group bench3-4 (whole-tile modules, which change too) once each.
	newbuild
	refnew d nvfp4_dual_gemm "$DT" "" 50 ref new ref2 new2
	peers
	refnew g34 nvfp4_group_gemm "$GW" /tmp/g34.json 40 ref new
	ptxaslist
	pack
	;;
cpkeep)
	# Step 75 (kernel-notes): the weight copies' per-piece sources kept
	# opaque (an empty asm), so NVVM cannot rebuild them in the chunk loop.
	# bin/web has it; bin/web_ref.gz is step 74's commit (expbuild.sh ref,
	# no define, from that commit's tree). Tests in the new build; A/A
	# medians alternated: DT on every dual benchmark shape (twice each),
	# GW on group bench1-2 (once each); the peers of this call.
	newbuild
	refnew d nvfp4_dual_gemm "$DT" "" 50 ref new ref2 new2
	refnew g nvfp4_group_gemm "$GW" /tmp/g12.json 90 ref new
	peers
	ptxaslist
	pack
	;;
slot)
	# Step 74 (kernel-notes): wg_ring_slot, the chunk ring slots as unsigned
	# remainders. bin/web has it; bin/web_ref.gz is the commit before it
	# (expbuild.sh ref, no define, from that commit's tree). Both bests'
	# tests in the new build, then A/A medians alternated between the two
	# builds: DT on every dual benchmark shape, GW on group bench1-2 (the
	# hybrid modules; bench3-4's whole-tile modules have the same PTX).
	# (Session 26 ran it with caps of 50 s and 55 s: group bench2 got no
	# time; 90 s fits both group shapes.)
	newbuild
	refnew d nvfp4_dual_gemm "$DT" "" 50 ref new ref2 new2
	refnew g nvfp4_group_gemm "$GW" /tmp/g12.json 90 ref new ref2 new2
	grep -E "^=== aa|^[0-9] +[0-9]x|^status" "$OUT/aa.log" | cut -c1-170
	pack
	;;
defer79)
	# Step 79 (kernel-notes): a stream-K piece that leaves partial sums
	# publishes them (fence, barrier, flag) in the next piece, after that
	# piece's first weight copies are out (bin/web_defer.gz: expbuild.sh
	# defer WG_DEFER=1; bin/web is the commit without it). Both bests'
	# tests in the new build, then A/A medians alternated on the concrete
	# stream-K modules of dual bench4 and bench3 and the hybrid module of
	# group bench2. Run as session 27's call 4 (1.009x, 0.989x; group bench2
	# cut by its --max-time); WG_DEFER was removed, its source at bdc9dea.
	bestvars
	unpackexp
	benchshapes
	WEB=./bin/web_defer tests d_tests nvfp4_dual_gemm "$DT" baseline
	WEB=./bin/web_defer tests g_tests nvfp4_group_gemm "$GW" baseline
	grep -E "^status" "$OUT/tests.log"
	N3='wgmma?schedule=streamk&decode=prmt&tokens=once&overlap=pdl&epilogue=split'
	T4='wgmma?tile_m=256&stages=2&schedule=streamk&registers=split&decode=prmt&tokens=once&overlap=pdl&epilogue=split'
	H2='wgmma?tile_n=192&tail_width=fit64&schedule=hybrid&registers=split&decode=prmt&tokens=once&overlap=pdl&staging=stmatrix&consumers=3&token_copy=width'
	export REFWEB=./bin/web NEWWEB=./bin/web_defer
	refnew b4 nvfp4_dual_gemm "$T4" /tmp/tl_b4.json 30 ref new ref2 new2
	refnew b3 nvfp4_dual_gemm "$N3" /tmp/tl_b3.json 30 ref new ref2 new2
	refnew g2 nvfp4_group_gemm "$H2" /tmp/tl_g2.json 40 ref new
	ptxaslist
	pack
	;;
keep29)
	# Session 29, call 6: the kept stream-K hand-over (step 80) after call
	# 5's family test found two faults, both mended: TestWgmmaFamily over
	# every combination of its cover with schedule=streamk (both problems)
	# and the dual's with schedule=hybrid; then the dual best against the
	# baseline (d_best29) and the peers of the same call.
	bestvars
	engine_env
	step fam_streamk 170 family.log env PITCHTANK_FAMILY_KNOB=schedule=streamk ./bin/engine.test -test.v \
		-test.timeout 165s -test.run '^TestWgmmaFamily$'
	step fam_hybrid 120 family.log env PITCHTANK_FAMILY_KNOB=schedule=hybrid ./bin/engine.test -test.v \
		-test.timeout 115s -test.run '^TestWgmmaFamily$/^nvfp4_dual_gemm$'
	grep -E -- "^\s*--- |^(ok|FAIL|PASS)|checking the|WRONG|rror" "$OUT/family.log" | cut -c1-200 | tail -14
	BENCH_MAX=70 bench d_best29 nvfp4_dual_gemm "$DT"
	peers
	TITLE="the kept stream-K hand-over's family checks; the dual best and the peers" summarize
	pack
	;;
sko82)
	# Session 30, step 82 (kernel-notes): after the early take, the rest of
	# that partner's sums and a middle partner's on one phase
	# (bin/web_sko1.gz, bin/engine_sko1.test.gz: EXPBUILD_TEST=1
	# expbuild.sh sko1 WG_SKO=1). The tall stream-K module on every test
	# shape and TestWgmmaFamily's dual stream-K and hybrid combinations in
	# that build; A/A medians alternated with bin/web on dual bench4; then
	# DT&token_wait=early paired with DT on the four shapes (bin/web).
	# Refuted in call 5 (0.994x) and removed: the WG_SKO build needs
	# c17d737's source.
	expsetup
	expcheck sko1 t4 schedule=streamk schedule=hybrid
	expaa sko1 3 b4
	BENCH_MAX=90 bench d_twe nvfp4_dual_gemm "$DT&token_wait=early" "$DT"
	TITLE="step 82: the end's loads on one phase; DT&token_wait=early" summarize
	pack
	;;
skep83)
	# Step 83 (kernel-notes), built in session 30 for a later call: the
	# early take by the producer thread on both dual tiles
	# (bin/web_skep1.gz, bin/engine_skep1.test.gz: EXPBUILD_TEST=1
	# expbuild.sh skep1 WG_SKEP=1; bin/web the plain build). The dual's
	# stream-K modules on every test shape and TestWgmmaFamily's dual
	# stream-K and hybrid combinations in that build; A/A medians alternated
	# with bin/web on bench4 and bench3, three of each; then, in that build,
	# the tall stream-K module with prefetch=next paired with it on bench4.
	# Kept (7b2d353) and the define went: these builds need 1e101ba's source.
	expsetup
	expcheck skep1 "t4 n3" schedule=streamk schedule=hybrid
	expaa skep1 3 b4 b3
	WEB=./bin/web_skep1 BENCH_MAX=60 BENCH_SHAPES=/tmp/tl_b4.json bench b4_pf nvfp4_dual_gemm "$T4&prefetch=next" "$T4"
	ptxaslist
	pack
	;;
skmg85)
	# Step 85 (kernel-notes, sessions 31-32; refuted, 0.9966x, and the
	# define went: these builds need 00721c4's source): step 84's
	# middle-piece take in the group GEMM (bin/web_skmg1.gz,
	# bin/engine_skmg1.test.gz: EXPBUILD_TEST=1 expbuild.sh skmg1 WG_SKMG=1;
	# bin/web the kept build). The group best's tests in that build and
	# TestWgmmaFamily's group stream-K and hybrid combinations; A/A medians
	# of its hybrid module alternated with bin/web on group bench2 (24
	# three-block tiles) and bench1 (none: the control), three of each.
	EXPFAMCAP=150 groupexp skmg1 3 schedule=streamk schedule=hybrid
	;;
skm84)
	# Step 84 (kernel-notes, session 31): a dual stream-K middle piece adds
	# its later partners' sums before it publishes (bin/web_skm1.gz,
	# bin/engine_skm1.test.gz: EXPBUILD_TEST=1 expbuild.sh skm1 WG_SKM=1;
	# bin/web the kept build, step 83's). The dual's stream-K modules on
	# every test shape and TestWgmmaFamily's dual stream-K and hybrid
	# combinations in that build; A/A medians alternated with bin/web on
	# bench4 and bench3, three of each. Kept on the 256-token tile (f3d6b94)
	# and the define went: these builds need a954325's source.
	expsetup
	expcheck skm1 "t4 n3" schedule=streamk schedule=hybrid
	expaa skm1 3 b4 b3
	ptxaslist
	pack
	;;
keep30)
	# Session 30, call 4: step 81's kept code (the early take on the dual's
	# 256-token tile) in bin/engine.test: TestWgmmaFamily's dual
	# combinations with schedule=streamk, schedule=hybrid and prefetch=next;
	# the candidate's tests on every test shape (its bench4 module forced
	# on them too); then DP paired with DT on the four shapes.
	# Refuted in this call (bench4 0.994x beside the early take) and removed:
	# prefetch=auto needs 2147398's source.
	bestvars
	DP="$DT&prefetch=auto"
	benchshapes
	engine_env
	expmods
	for kn in schedule=streamk schedule=hybrid prefetch=next; do
		knobfamily "$kn" 100 '^TestWgmmaFamily$/^nvfp4_dual_gemm$'
	done
	tests dp_tests nvfp4_dual_gemm "$DP" baseline
	tests t4pf_tests nvfp4_dual_gemm "$T4&prefetch=next" baseline
	grep -E "^status" "$OUT/tests.log"
	BENCH_MAX=90 bench d_dp nvfp4_dual_gemm "$DP" "$DT"
	TITLE="step 81 kept: the family's dual checks; DP against DT" summarize
	pack
	;;
sass33)
	# Step 89's reading (kernel-notes, session 33): whether the consumers'
	# chunk loop in GW's hybrid module changed in the build whose producer
	# warp 1 only polls (bin/web_l2w3.gz, from 528605c: expbuild.sh l2w3
	# WG_L2W=2) against bin/web (5c3ee02's kept kernels). A short A/A of
	# each (10 samples: `web bench --max-samples`) compiles the module; the
	# cache's SASS comes back (sassdump) for `go run ./dev/ptxloop -sass`.
	expsetup
	for b in web web_l2w3; do
		step "g2_$b" 60 short.log "./bin/$b" bench --problem nvfp4_group_gemm --aa --baseline "$GH" \
			--shapes /tmp/tl_g2.json --device 0 --cache-dir "$C" --max-time 50s --max-samples 10 --json "$R/g2_$b.json"
	done
	sassdump
	ptxaslist
	pack
	;;
l2w89c)
	# Step 89's ablations (kernel-notes, session 33; the line refuted and
	# the code went: these builds need 528605c's source): the second form's
	# polling without its prefetches (bin/web_l2w3.gz: expbuild.sh l2w3
	# WG_L2W=2) and its prefetches with warp 1 sleeping 1,000 ns between
	# polls (bin/web_l2w4.gz: expbuild.sh l2w4 WG_L2W=3); bin/web the kept
	# build. A/A of GW's hybrid module, the three builds in turn, two rounds
	# on group bench2 and bench1 (the bench checks each run's outputs).
	expsetup
	expaa "l2w3 l2w4" 2 g2 g1
	python3 dev/gpucall/aamed.py "$OUT/aa.log" | tee "$OUT/aamed.txt"
	ptxaslist
	pack
	;;
l2w89b)
	# Step 89's second form (kernel-notes, session 33; refuted, 0.9920x and
	# 0.9884x, and the code went: this build needs 528605c's source, or
	# 72affc8's without the ablations): warp 1 reads each
	# later piece's rows from a mailbox the producer thread posts, instead
	# of walking the pieces itself, whose first form spilled 36 bytes in
	# the hybrid module (bin/web_l2w2.gz, bin/engine_l2w2.test.gz:
	# EXPBUILD_TEST=1 expbuild.sh l2w2 WG_L2W=1; bin/web the kept build).
	# GW's tests in that build and its hybrid module's ptxas lines (L2W_KEY:
	# the module's cache key, from `go run ./dev/ptxloop -keys 13.0` in a
	# copy of the tree with WG_L2W 1). Only if that module does not spill,
	# the A/A of l2w89; only if bench2 then gains 0.3%, the family's group
	# hybrid combinations in that build.
	expsetup
	expcheck l2w2 gw
	grep -A2 "'wg_group_gemm'" "$C/${L2W_KEY:?}.log" >"$OUT/l2w2_ptxas.txt" 2>&1 || echo "no ptxas log for $L2W_KEY" >>"$OUT/l2w2_ptxas.txt"
	cat "$OUT/l2w2_ptxas.txt"
	if grep -q " 0 bytes spill stores" "$OUT/l2w2_ptxas.txt"; then
		expaa l2w2 3 g2 g1
		python3 dev/gpucall/aamed.py "$OUT/aa.log" | tee "$OUT/aamed.txt"
		if awk '/^g2:/ { if ($NF + 0 >= 1.003) ok = 1 } END { exit !ok }' "$OUT/aamed.txt"; then
			EXPFAM=nvfp4_group_gemm EXPFAMCAP=120 expcheck l2w2 "" schedule=hybrid
		fi
	fi
	ptxaslist
	pack
	;;
l2w89)
	# Step 89's first form (kernel-notes, session 33; its module spilled,
	# 0.9805x and 0.9827x, and the code went: this build needs 5c3ee02's
	# source): the producer warpgroup's idle warp
	# 1 asks L2 for each later piece's first weight chunks and scales, one
	# prefetch.global.L2 per line (bin/web_l2w1.gz, bin/engine_l2w1.test.gz:
	# EXPBUILD_TEST=1 expbuild.sh l2w1 WG_L2W=1; bin/web the kept build).
	# The group best's tests and TestWgmmaFamily's group hybrid combinations
	# in that build; A/A of GW's hybrid module alternated with bin/web on
	# group bench2 (three later pieces a block) and bench1 (one), three of
	# each, capped at expaa's 500 samples so each run ends and writes its
	# document (python3 dev/gpucall/aamed.py aa.log reads the medians); the
	# modules' ptxas lines.
	groupexp l2w1 3 schedule=hybrid
	;;
l2b88)
	# Step 88 (kernel-notes, sessions 32-33; refuted, 0.9565x on bench2,
	# and the code went: these builds need b8d243a's source): the
	# group's producer thread asks L2 for a piece's weights and scales with
	# two bulk prefetches (bin/web_l2b1.gz, bin/engine_l2b1.test.gz:
	# EXPBUILD_TEST=1 expbuild.sh l2b1 WG_L2B=1; bin/web the kept build).
	# The group best's tests and TestWgmmaFamily's group hybrid combinations
	# in that build; A/A medians of GW's hybrid module alternated with
	# bin/web on group bench2 (192 KB tiles: prefetched) and bench1 (672 KB:
	# over WG_L2B_MAX, the control), three of each (python3
	# dev/gpucall/aamed.py aa.log); the modules' ptxas lines.
	groupexp l2b1 3 schedule=hybrid
	;;
l2p87)
	# Step 87 (kernel-notes, session 32; refuted, 0.572x and 0.826x, and
	# the code went: these builds need 5683875's source): the group's
	# producer thread asks L2 for a piece's first weight chunks as it starts
	# the piece's token copies (bin/web_l2p1.gz: expbuild.sh l2p1 WG_L2P=1;
	# bin/web the kept build).
	# The group best's tests in that build; A/A medians of GW's hybrid module
	# alternated with bin/web on group bench2 (three boundaries a block) and
	# bench1 (one), three of each (python3 dev/gpucall/aamed.py aa.log).
	groupexp l2p1 3
	;;
stw86)
	# Step 86 (kernel-notes, session 32; refuted, 0.9996x and 0.9843x, and
	# the code went: these builds need a8c2f6b's source): the producer
	# warpgroup's idle warps store the group's staged tiles
	# (bin/web_stw1.gz, bin/engine_stw1.test.gz:
	# EXPBUILD_TEST=1 expbuild.sh stw1 WG_STW=1; bin/web the kept build). The
	# group best's tests and TestWgmmaFamily's group stream-K and hybrid
	# combinations in that build; A/A medians of GW's hybrid module
	# alternated with bin/web on group bench2 (three boundaries a block) and
	# bench1 (one), two of each (python3 dev/gpucall/aamed.py aa.log); the
	# modules' ptxas lines.
	EXPFAMCAP=150 groupexp stw1 2 schedule=streamk schedule=hybrid
	;;
probe32)
	# Session 32, call 2: group bench3 (120 whole two-consumer tiles for 132
	# SMs, 72 of 128 tokens and 48 of 64) under today's stream-K, equal and
	# cost-balanced ranges, each paired with GW in one process; the engine's
	# submission tests from the repository root (bin/engine.test with
	# internal/repotest's search, which no call had run from there).
	bestvars
	benchshapes
	engine_env
	GSK=${GW/schedule=autohybrid/schedule=streamk}
	step submitted 240 engine.log ./bin/engine.test -test.v -test.timeout 600s -test.run '^TestSubmitted'
	BENCH_MAX=100 BENCH_SHAPES=/tmp/tl_g3.json bench g3_sk nvfp4_group_gemm "$GSK" "$GW"
	BENCH_MAX=100 BENCH_SHAPES=/tmp/tl_g3.json bench g3_skc nvfp4_group_gemm "$GSK&ranges=cost" "$GW"
	TITLE="group bench3 under stream-K" summarize
	pack
	;;
dualpeers31 | grouppeers32)
	# One best against the baseline and the peers of the same call, on
	# whichever machine it gets: a second same-call comparison of a
	# standing against peer (c). dualpeers31 (session 31, call 7): the dual
	# best (d_best31b), of call 4's 1.151x; grouppeers32 (session 32, call
	# 5): the group best (g_best32), of section 42's 1.222x.
	bestvars
	case $MODE in
	dualpeers31) BENCH_MAX=70 bench d_best31b nvfp4_dual_gemm "$DT" ;;
	grouppeers32) BENCH_MAX=150 bench g_best32 nvfp4_group_gemm "$GW" ;;
	esac
	peers
	TITLE="a best and the peers" summarize
	pack
	;;
standing30 | standing31)
	# Sessions 30-31: the standing at HEAD: both bests' tests, each best
	# against the baseline (d_bestN, g_bestN, N the session), the peers.
	bestvars
	tests d_best_tests nvfp4_dual_gemm "$DT" baseline
	tests g_best_tests nvfp4_group_gemm "$GW" baseline
	best "${MODE#standing}" "$DT" "$GW" "${RUNG_MAX:-150}"
	peers
	TITLE="the standing at HEAD" summarize
	pack
	;;
ske81)
	# Session 30, step 81 (kernel-notes): a dual stream-K owner's early take
	# of half its last partner's sums (bin/web_ske1.gz and
	# bin/engine_ske1.test.gz: EXPBUILD_TEST=1 expbuild.sh ske1 WG_SKE=1;
	# bin/web_tlske.gz: expbuild.sh tlske WG_TL=2 WG_SKE=1). The dual's
	# stream-K modules on every test shape and TestWgmmaFamily's dual
	# combinations with schedule=streamk in that build, then A/A medians
	# alternated with bin/web on dual bench4 and bench3, then bench4's marks.
	# Kept on the 256-token tile only (2147398) and the define went: these
	# builds need 7f8a502's source.
	expsetup
	expcheck ske1 "t4 n3" schedule=streamk
	expaa ske1 2 b4 b3
	tlruns tlske "d4 nvfp4_dual_gemm b4 $DT"
	ptxaslist
	pack
	;;
pf30)
	# Session 30, call 2: the weight ring's two prefetch forms against DT now
	# that step 80 took the partial-sum stores off the pieces' path:
	# prefetch=next on the stream-K shapes (bench3-4), prefetch=producer on
	# all four, each paired with DT in one process.
	bestvars
	benchshapes
	BENCH_MAX=80 BENCH_SHAPES=/tmp/d34.json bench d34_pfnext nvfp4_dual_gemm "$DT&prefetch=next" "$DT"
	BENCH_MAX=100 bench d_pfprod nvfp4_dual_gemm "$DT&prefetch=producer" "$DT"
	TITLE="prefetch=next and prefetch=producer against DT" summarize
	pack
	;;
skt80)
	# Step 80 (kernel-notes): stream-K partial sums through the TMA engine
	# (bin/web_skt1.gz: expbuild.sh skt1 WG_SKT=1, the non-owners' bulk
	# stores; bin/web_skt3.gz: WG_SKT=3, the owners' bulk loads too; bin/web
	# is the commit without them). First the engine's submission tests
	# (session 28's path fix, never run on the device), then the stream-K
	# modules of dual bench3-4 and the group's hybrid on every test shape in
	# the WG_SKT=3 build, then A/A medians alternated over the three builds:
	# SKT80=b4 (dual bench4), b3 (dual bench3) or g2 (group bench2's hybrid).
	# Call 1 ran b4 as it stood at f371857, call 2 b3; later calls name the
	# build under test (SKTT, e.g. skt13: no submission tests then) and the
	# builds to alternate (SKTB). WG_SKT=13 became the only code in c8a1ed8
	# and the define went: the experiment builds need 0063fea's source.
	bestvars
	unpackexp
	benchshapes
	engine_env
	if [ "${SKT80:-b4}" = b4 ] && [ -z "${SKTT:-}" ]; then
		step submitted 150 engine.log ./bin/engine.test -test.v -test.timeout 140s -test.run '^TestSubmitted'
		grep -E -- "^(--- |ok|FAIL|PASS)" "$OUT/engine.log" | tail -6
	fi
	N3='wgmma?schedule=streamk&decode=prmt&tokens=once&overlap=pdl&epilogue=split'
	T4='wgmma?tile_m=256&stages=2&schedule=streamk&registers=split&decode=prmt&tokens=once&overlap=pdl&epilogue=split'
	H2='wgmma?tile_n=192&tail_width=fit64&schedule=hybrid&registers=split&decode=prmt&tokens=once&overlap=pdl&staging=stmatrix&consumers=3&token_copy=width'
	case ${SKT80:-b4} in
	b4)
		WEB=./bin/web_${SKTT:-skt3} tests t4_tests nvfp4_dual_gemm "$T4" baseline
		WEB=./bin/web_${SKTT:-skt3} tests n3_tests nvfp4_dual_gemm "$N3" baseline
		WEB=./bin/web_${SKTT:-skt3} tests h2_tests nvfp4_group_gemm "$H2" baseline
		grep -E "^status" "$OUT/tests.log"
		v=$T4 p=nvfp4_dual_gemm shp=/tmp/tl_b4.json max=25
		;;
	b3) v=$N3 p=nvfp4_dual_gemm shp=/tmp/tl_b3.json max=25 ;;
	g2) v=$H2 p=nvfp4_group_gemm shp=/tmp/tl_g2.json max=${SKTMAX:-40} ;;
	esac
	# SKTB: the builds, each run twice in turn ("plain" is bin/web; call 1
	# ran skt1 and skt3).
	for r in 1 2; do
		for b in ${SKTB:-plain skt1 skt3}; do
			w=./bin/web_$b
			[ "$b" = plain ] && w=./bin/web
			step "aa_${SKT80:-b4}_$b$r" $((max + 10)) aa.log "$w" bench --problem "$p" --aa --baseline "$v" \
				--shapes "$shp" --device 0 --cache-dir "$C" --max-time "${max}s" --json "$R/aa_${SKT80:-b4}_$b$r.json"
		done
	done
	ptxaslist
	pack
	;;
modules27)
	# Session 27, call 3: the result documents' per-shape modules (schema
	# 3) on the device: engine's TestModuleNamesWhatRan (bin/engine.test),
	# then A/A benches of DT on every dual shape and GW on group bench3-4,
	# whose documents name each shape's module (compared here with `go run
	# ./dev/ptxloop -keys 13.0`); step 78: the narrow tile under
	# schedule=autohybrid paired with DT on dual bench4; the peers.
	bestvars
	benchshapes
	step modtest 240 modtest.log ./bin/engine.test -test.v -test.timeout 230s -test.run '^TestModuleNamesWhatRan$'
	grep -E -- "^(=== RUN|--- |ok|FAIL|PASS)|ran [0-9]+ modules|want" "$OUT/modtest.log" | head -12
	step d_mod 90 mod.log ./bin/web bench --problem nvfp4_dual_gemm --aa --baseline "$DT" \
		--device 0 --cache-dir "$C" --max-time 80s --json "$R/d_mod.json"
	step g_mod 60 mod.log ./bin/web bench --problem nvfp4_group_gemm --aa --baseline "$GW" \
		--shapes /tmp/g34.json --device 0 --cache-dir "$C" --max-time 50s --json "$R/g_mod.json"
	NH='wgmma?schedule=autohybrid&decode=prmt&tokens=once&overlap=pdl&epilogue=split'
	step nh_b4 70 mod.log ./bin/web bench --problem nvfp4_dual_gemm --variant "$NH" --baseline "$DT" \
		--shapes /tmp/tl_b4.json --device 0 --cache-dir "$C" --max-time 60s --json "$R/nh_b4.json"
	peers
	grep -E "^[0-9] |^status|^- shapes|^Modules" "$OUT/mod.log" | cut -c1-200
	pack
	;;
standing27)
	# Session 27, call 2: the standing on the build of steps 74-76 (both
	# bests' tests, each best against the baseline, the peers of the same
	# call), then step 77: the copies' byte counts made opaque under
	# stream-K too (bin/web_cpnsk.gz, expbuild.sh cpnsk WG_CPNSK=1) against
	# the kept form (bin/web), A/A alternated on dual bench3 and bench4's
	# concrete modules (one module each to compile), and the SASS of every
	# cached cubin (sass26's form). WG_CPNSK was removed after the call
	# (0.984x again on bench3); its source is at 301c93d.
	bestvars
	unpackexp
	benchshapes
	tests d_best_tests nvfp4_dual_gemm "$DT" baseline
	tests g_best_tests nvfp4_group_gemm "$GW" baseline
	best 27 "$DT" "$GW" "${RUNG_MAX:-150}"
	peers
	N3='wgmma?schedule=streamk&decode=prmt&tokens=once&overlap=pdl&epilogue=split'
	T4='wgmma?tile_m=256&stages=2&schedule=streamk&registers=split&decode=prmt&tokens=once&overlap=pdl&epilogue=split'
	REFWEB=./bin/web NEWWEB=./bin/web_cpnsk refnew b3 nvfp4_dual_gemm "$N3" /tmp/tl_b3.json 30 ref new ref2 new2
	REFWEB=./bin/web NEWWEB=./bin/web_cpnsk refnew b4 nvfp4_dual_gemm "$T4" /tmp/tl_b4.json 30 ref new
	sassdump
	ptxaslist
	TITLE="the standing on steps 74-76's build; step 77" summarize
	pack
	;;
standing28)
	# Session 28, call 1: the server end to end first (bin/webgpu.test,
	# docs/gpu-e2e.md; the standing call now runs it, so a stale test is
	# seen within a session), then the standing at HEAD: both bests' tests,
	# each best against the baseline (d_best28, g_best28: the documents of
	# the demo's H200 ladder, internal/demo/ladder_h200.json), the peers.
	step e2e 330 e2e.log env PITCHTANK_GPU_E2E=1 PITCHTANK_REQUIRE_NVRTC=1 PITCHTANK_WEB_BIN=./bin/web \
		./bin/webgpu.test -test.run '^TestGPUServerRuns$' -test.v -test.timeout 320s
	grep -E -- "^(--- |ok|FAIL|PASS)" "$OUT/e2e.log" | tail -3
	bestvars
	tests d_best_tests nvfp4_dual_gemm "$DT" baseline
	tests g_best_tests nvfp4_group_gemm "$GW" baseline
	best 28 "$DT" "$GW" "${RUNG_MAX:-150}"
	peers
	TITLE="the server end to end; the standing at HEAD" summarize
	pack
	;;
standing)
	# Session 23's first measurement: both bests' tests, each best against
	# the baseline, and the peers of the same call: issue 11's standing
	# with the group's best since session 22 (GW), which no peer has run
	# beside yet.
	bestvars
	tests d_best_tests nvfp4_dual_gemm "$DT" baseline
	tests g_best_tests nvfp4_group_gemm "$GW" baseline
	best 23 "$DT" "$GW" "${RUNG_MAX:-160}"
	peers
	TITLE="both bests against the baseline, and the peers of the same call" summarize
	pack
	;;
newknobs)
	# Session 22's knob values under the device family test (every
	# combination of TestWgmmaFamily's core and pairwise cover that has
	# them, each on every test and benchmark shape): token_copy=width (24
	# group combinations), then token_wait=early (25 group, 22 dual).
	# Builds: bin/engine.test.
	knobfamily token_copy=width 260
	knobfamily token_wait=early 300
	TITLE="the family test over token_copy=width and token_wait=early" summarize
	pack
	;;
gtwe)
	# Step 67: token_wait=early (WG_TWE) on both bests: ptxas of the group
	# best's bench1 module with it, both problems' tests, then each best
	# with it paired with itself (group bench1-2, dual every shape).
	bestvars
	benchshapes
	ptxas gtwe -DDUAL=0 -DSTAGES=3 -DWG_CONS=3 -DWG_CREGS=160 -DWG_DEC=1 -DWG_FIT=2 -DWG_MB=1 -DWG_PDL=1 -DWG_RS=4 -DWG_SK=2 -DWG_STM=1 -DWG_TM=128 -DWG_TOK=1 -DWG_TWE=1
	ptxsummary >"$OUT/ptxas_summary.txt"
	# Where ptxas put the test's predicate use: the SASS after each phase check.
	CUOBJ=$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)
	"$CUOBJ" -sass /tmp/wg.cubin | grep -n -B2 -A14 "PHASECHK" | head -400 >"$OUT/sass_twe.txt" 2>&1
	tests g_twe_tests nvfp4_group_gemm "$GS&token_wait=early" "$GS"
	tests d_twe_tests nvfp4_dual_gemm "$DT&token_wait=early" "$DT"
	grep -E "WRONG|FAIL|mismatch|rror" "$OUT/tests.log" | head -5
	BENCH_MAX=100 BENCH_SHAPES=/tmp/g12.json bench g_twe_gs nvfp4_group_gemm "$GS&token_wait=early" "$GS"
	BENCH_MAX=80 bench d_twe_dt nvfp4_dual_gemm "$DT&token_wait=early" "$DT"
	TITLE="step 67: the next token stage tested early" summarize
	pack
	;;
gtwe2)
	# Step 67, second call: token_wait=early on the dual best (its knob was
	# missing from the dual's space in the first call), and the group best
	# with both of this session's kept knobs against itself on every shape.
	bestvars
	GSWE="$GS&token_copy=width&token_wait=early"
	tests d_twe_tests nvfp4_dual_gemm "$DT&token_wait=early" "$DT"
	tests g_gswe_tests nvfp4_group_gemm "$GSWE" "$GS"
	grep -E "WRONG|FAIL|mismatch|rror" "$OUT/tests.log" | head -5
	BENCH_MAX=90 bench d_twe_dt nvfp4_dual_gemm "$DT&token_wait=early" "$DT"
	BENCH_MAX=150 bench g_gswe_gs nvfp4_group_gemm "$GSWE" "$GS"
	TITLE="step 67: token_wait=early on the dual best; the group best with both knobs" summarize
	pack
	;;
tcwrung)
	# Step 66's rung: the group best with token_copy=width against the
	# baseline on every group shape (for kernels/ladder.json and the demo).
	bestvars
	BENCH_MAX=${RUNG_MAX:-185} bench g_tcw_rung nvfp4_group_gemm "$GW"
	TITLE="token_copy=width: the group rung against the baseline" summarize
	pack
	;;
skelprobe)
	# Step 64: the group GEMM's consumer skeleton in dev/wgprobe (skel): the
	# halves pipeline's chains of four, their fences, B walking three stages,
	# the fragments rewritten, the token ring's barriers, one at a time.
	probebuild
	step wgprobe_skel 200 wgprobe.txt /tmp/wgprobe skel
	grep -E "skel:|cycles per wgmma|SMs|wgprobe:|C75|error" "$OUT/wgprobe.txt"
	pack
	;;
xdec36)
	# Step 92: the consumers' weight decode of a pre-packed word (WG_XDEC:
	# four shifts and four LOP3 a word against WG_DEC 1's eleven), timed by
	# WG_STAMP marks of launch 0 (nothing packs the weights yet, so the
	# sums are wrong and its bench stops at the first check), against the
	# stamp build without it, alternated; the group best GW on bench1,
	# bench2 (twice) and bench4. Builds here: expbuild.sh stamp
	# WG_STAMP=1; expbuild.sh stampx WG_STAMP=1 WG_XDEC=1.
	bestvars
	unpackexp
	benchshapes
	for s in g2 g1 g4 g2; do
		for b in "" x; do
			n="$s$b"
			[ -f "$OUT/stamp_$n.txt" ] && n="${n}_2"
			stampbench "$n" "./bin/web_stamp$b" "$GW" nvfp4_group_gemm "/tmp/tl_$s.json"
			echo "== $n" >>"$OUT/stamps.txt"
			python3 dev/gpucall/stamps.py --launch 0 "$OUT/stamp_$n.txt" >>"$OUT/stamps.txt" 2>&1
		done
	done
	cat "$OUT/stamps.txt"
	pack
	;;
xprobe35)
	# Step 91: step 64's skeleton in two-block clusters, half the decode per
	# block, the other half passed through distributed shared memory.
	probebuild
	grep -E "skelx|registers|spill|error" "$OUT/wgprobe.txt" | head -20
	step wgprobe_skelx 200 wgprobe.txt /tmp/wgprobe skelx
	grep -E "skel|SMs|wgprobe:|error" "$OUT/wgprobe.txt"
	pack
	;;
timeline)
	# Where a short shape's time goes between its two launches: each
	# kernel's own duration under ncu (which runs them one at a time, so
	# without the overlap), the best variants, each shape alone, ungated.
	NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
	G5='wgmma?tile_n=auto&consumers=3&schedule=autohybrid&decode=prmt&tokens=once&overlap=pdl&tail_width=fit64'
	D='wgmma?tile_n=auto&schedule=auto&decode=prmt&tokens=once&overlap=pdl'
	echo '[{"m":[128,384],"n":4096,"k":1536}]' >/tmp/g4.json
	echo '[{"m":[192,320],"n":3072,"k":4096}]' >/tmp/g3.json
	echo '[{"m":[256],"n":3072,"k":4096}]' >/tmp/d3.json
	echo '[{"m":[80,176,128,72,64,248,96,160],"n":4096,"k":7168}]' >/tmp/g1.json
	for c in "g4 nvfp4_group_gemm $G5" "g3 nvfp4_group_gemm $G5" "d3 nvfp4_dual_gemm $D" "g1 nvfp4_group_gemm $G5"; do
		set -- $c
		NCU_MAX=60 ncubench "tl_$1" 100 ncu_tl.txt "$2" "$3" "/tmp/$1.json" -k regex:wg_ --launch-skip 40 \
			--launch-count 6 --metrics gpu__time_duration.sum,sm__cycles_elapsed.max,smsp__cycles_active.avg
	done
	grep -E "^  wg_|gpu__time_duration|=== ncu" "$OUT/ncu_tl.txt" | cut -c1-160 | head -80
	pack
	;;
profprmt)
	# Where the best dual variant's time goes with each decode: one launch of
	# each on bench2 (M512 N4096 K7168, whole tiles), pipes, issue, stalls.
	NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
	echo '[{"m":[512],"n":4096,"k":7168}]' >/tmp/b2.json
	for dec in shift prmt; do
		V='wgmma?tile_n=128&stages=2&registers=split'
		[ "$dec" = prmt ] && V="$V&decode=prmt"
		step "ncu_$dec" 200 "ncu_$dec.txt" "$NCU" -k regex:wg_dual_gemm --launch-skip 10 --launch-count 1 \
			--section SpeedOfLight --section SchedulerStats --section WarpStateStats \
			--metrics sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_shared_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_alu.sum,sm__inst_executed_pipe_fma.sum,sm__inst_executed_pipe_lsu.sum,sm__inst_executed.sum,sm__cycles_elapsed.max,smsp__average_warp_latency_issue_stalled_barrier.ratio,smsp__average_warp_latency_issue_stalled_wait.ratio,smsp__average_warp_latency_issue_stalled_math_pipe_throttle.ratio,smsp__average_warp_latency_issue_stalled_dispatch_stall.ratio,smsp__average_warp_latency_issue_stalled_long_scoreboard.ratio,smsp__average_warp_latency_issue_stalled_short_scoreboard.ratio \
			./bin/web bench --problem nvfp4_dual_gemm --aa --baseline "$V" --shapes /tmp/b2.json \
			--device 0 --cache-dir "$C" --max-time 100s --json "$R/prof_$dec.json"
		grep -E "pipe_|inst_executed|cycles_elapsed|Duration|Issue Slots Busy|No Eligible|Warp Cycles Per Issued|stalled" "$OUT/ncu_$dec.txt" | head -30
	done
	pack
	;;
pipes)
	# Which pipe is busy: the group kernel (wgmma) on bench1, one launch.
	NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
	echo '[{"m":[80,176,128,72,64,248,96,160],"n":4096,"k":7168}]' >/tmp/g1.json
	step ncu_pipes 200 ncu.log "$NCU" -k regex:wg_group_gemm --launch-skip 10 --launch-count 1 \
		--section ComputeWorkloadAnalysis --section InstructionStats --section WarpStateStats --section SpeedOfLight \
		--metrics sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_fmaheavy_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_shared_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_alu.sum,sm__inst_executed_pipe_fma.sum,sm__inst_executed_pipe_lsu.sum,sm__inst_executed_pipe_uniform.sum,sm__inst_executed.sum,sm__cycles_elapsed.max,smsp__inst_executed_pipe_alu.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_xu.sum \
		./bin/web bench --problem nvfp4_group_gemm --aa --baseline wgmma --shapes /tmp/g1.json \
		--device 0 --cache-dir "$C" --max-time 120s --json "$R/prof_g1.json"
	grep -E "pipe|inst_executed|cycles_elapsed|Duration|Issue Slots|No Eligible|Pipe|Utilization" "$OUT/ncu.log" | head -60
	pack
	;;
splitcheck)
	# Every combination (the split ones included) on every test and benchmark
	# shape, and the group split rung against the baseline.
	step family 300 family.log ./bin/engine.test -test.v -test.timeout 600s -test.run '^TestWgmmaFamily$'
	BENCH_MAX=150 bench g_split nvfp4_group_gemm 'wgmma?tile_n=256&stages=2&schedule=auto&registers=split'
	TITLE="wgmma registers=split check" summarize
	grep -E -- "^(=== RUN|--- |ok|FAIL|PASS)" "$OUT/family.log" | tail -80
	;;
regs)
	# setmaxnreg: does ptxas honour the split (no C7508), and what does each
	# tile need? Then where the dual kernel's warps stall, per SASS line.
	# All builds at once (16 cores), one log each.
	pbuild() {
		local name=$1
		shift
		timeout 120 nvcc -cubin -gencode=arch=compute_90a,code=sm_90a -Xptxas -v "$@" \
			-o "/tmp/wg_$name.cubin" kernels/cuda/wg_group_gemm.cu >"$R/ptxas_$name.log" 2>&1
		echo "rc=$?" >>"$R/ptxas_$name.log"
	}
	for c in 0 208 216 224 232; do
		pbuild "group_tm128_mb1_r$c" -DWG_TM=128 -DWG_MB=1 -DSTAGES=3 -DWG_RS=4 -DWG_CREGS=$c &
		pbuild "group_tm128_mb2_r$c" -DWG_TM=128 -DWG_MB=2 -DSTAGES=2 -DWG_RS=3 -DWG_CREGS=$c &
		pbuild "dual_tm128_mb2_r$c" -DDUAL=1 -DWG_TM=128 -DWG_MB=2 -DSTAGES=2 -DWG_RS=3 -DWG_CREGS=$c &
	done
	pbuild dual_tm128_mb1_r0 -DDUAL=1 -DWG_TM=128 -DWG_MB=1 -DSTAGES=3 -DWG_RS=4 -DWG_CREGS=0 &
	pbuild dual_tm128_mb1_r216 -DDUAL=1 -DWG_TM=128 -DWG_MB=1 -DSTAGES=3 -DWG_RS=4 -DWG_CREGS=216 &
	wait
	for f in "$R"/ptxas_*.log; do
		echo "== $(basename "$f" .log)"
		grep -E "registers|spill|C75|error|rc=" "$f"
	done >"$OUT/ptxas_summary.txt"
	cat "$OUT/ptxas_summary.txt"
	NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
	echo '[{"m":[256],"n":4096,"k":7168}]' >/tmp/b1.json
	step ncu_src 200 ncu.log "$NCU" -k regex:wg_dual_gemm --launch-skip 10 --launch-count 1 \
		--section WarpStateStats --section SourceCounters --section SchedulerStats --import-source no -f -o /tmp/prof_b1 \
		./bin/web bench --problem nvfp4_dual_gemm --aa --baseline wgmma --shapes /tmp/b1.json \
		--device 0 --cache-dir "$C" --max-time 120s --json "$R/prof_b1.json"
	step ncu_page 60 ncu.log sh -c "\"$NCU\" -i /tmp/prof_b1.ncu-rep --page source --csv --print-source sass >\"$OUT/src_b1.csv\""
	step ncu_details 60 ncu.log sh -c "\"$NCU\" -i /tmp/prof_b1.ncu-rep --page details >\"$OUT/details_b1.txt\""
	pack
	;;
epi)
	# Step 29: the dual epilogue split between the pair (both gate, stage
	# and store half the tokens; the SiLU's fast reciprocal). bin/web_rcp
	# has WG_RCP=1, the reciprocal in both forms, so its pairing is the
	# split alone. Builds: bin/web, bin/engine.test, bin/web_rcp.gz
	# (bash dev/gpucall/expbuild.sh rcp WG_RCP=1).
	bestvars
	unpackexp
	ptxas dw $DWDEFS
	ptxas dwepi $DWDEFS -DWG_EPI=1
	ptxas dnepi -DDUAL=1 -DSTAGES=3 -DWG_CONS=2 -DWG_DEC=1 -DWG_MB=1 -DWG_PDL=1 -DWG_RS=4 -DWG_TM=128 -DWG_TOK=1 -DWG_EPI=1
	ptxsummary
	tests d_epi_tests nvfp4_dual_gemm "$D&epilogue=split" "$D"
	BENCH_MAX=80 bench d_epi nvfp4_dual_gemm "$D&epilogue=split" "$D"
	WEB=./bin/web_rcp BENCH_MAX=80 bench d_epi_rcp nvfp4_dual_gemm "$D&epilogue=split" "$D"
	peers
	TITLE="epilogue=split (WG_EPI) against the best dual variant; in the WG_RCP build the split alone" summarize
	knobfamily epilogue=split 200 '^TestWgmmaFamily$/^nvfp4_dual_gemm$'
	pack
	;;
epi2)
	# Step 29, call 2: the epilogue=split rung against the baseline, then
	# the dual best with it (E) paired with the forms the old epilogue had
	# ranked below it: prefetch=producer, schedule=autohybrid, and four
	# folded consumers on the wide tile (each pair splits its epilogue).
	# Builds: bin/web.
	bestvars
	BENCH_MAX=75 bench d_epi_rung nvfp4_dual_gemm "$E"
	BENCH_MAX=70 bench d_epi_pw nvfp4_dual_gemm "$E&prefetch=producer" "$E"
	BENCH_MAX=70 bench d_epi_ah nvfp4_dual_gemm "${E/schedule=auto/schedule=autohybrid}" "$E"
	BENCH_MAX=70 bench d_epi_f4 nvfp4_dual_gemm 'wgmma?tile_n=128&stages=2&decode=prmt&tokens=once&overlap=pdl&consumers=4&producer=folded&epilogue=split' "$E"
	TITLE="epilogue=split: the rung, and the dual best with it against three forms" summarize
	pack
	;;
epi3)
	# Step 29, call 3: with the epilogue cheaper, narrow tiles (two
	# epilogues per block) gained most (bench1 1.148x), so tile_n=auto's
	# per-shape choices may have moved: E paired with the narrow tile under
	# autohybrid and under stream-K, and with 256-token tiles.
	# Builds: bin/web.
	bestvars
	T='decode=prmt&tokens=once&overlap=pdl&epilogue=split'
	BENCH_MAX=70 bench d_epi_nah nvfp4_dual_gemm "wgmma?schedule=autohybrid&$T" "$E"
	BENCH_MAX=70 bench d_epi_nsk nvfp4_dual_gemm "wgmma?schedule=streamk&$T" "$E"
	BENCH_MAX=70 bench d_epi_t256 nvfp4_dual_gemm "wgmma?tile_m=256&stages=2&schedule=auto&registers=split&$T" "$E"
	TITLE="the dual best with epilogue=split against other tiles and schedules with it" summarize
	pack
	;;
g3sk)
	# Step 30: tile_n=auto takes the group's narrow two-consumer tile on
	# bench3 and bench4 (the 192-row tiles fill 61% and 67% of the SMs),
	# then whole tiles; the 192-row tile under stream-K there was never
	# measured. W3 = that tile on every shape (autohybrid: hybrid on
	# bench1-2 as G, stream-K on bench3-4), paired with G. Builds: bin/web.
	bestvars
	W3='wgmma?tile_n=192&tail_width=fit64&schedule=autohybrid&registers=split&decode=prmt&tokens=once&overlap=pdl&consumers=3'
	# Only bench3-4, where W3 differs from G (call 4 of session 12 ran all
	# four and ran out of its time on bench3: bench1-2 were A/A, 1.003x and
	# 0.999x). Its tests passed then.
	echo '[{"m":[192,320],"n":3072,"k":4096},{"m":[128,384],"n":4096,"k":1536}]' >/tmp/g34.json
	step g3sk34 110 bench.log ./bin/web bench --problem nvfp4_group_gemm --variant "$W3" --baseline "$G" \
		--shapes /tmp/g34.json --device 0 --cache-dir "$C" --max-time 100s --json "$R/g3sk34.json"
	TITLE="the group's 192-row tile under stream-K on bench3-4, against the group best" summarize
	pack
	;;
profepi)
	# Step 29's profile: where the new dual best (E) stands on bench2 (the
	# wide tile, where cuBLAS on pre-decoded operands is 1.07x faster),
	# and D in the same call. Builds: bin/web.
	bestvars
	for v in "$E" "$D"; do
		echo "### $v" >>"$OUT/ncu_dual.txt"
		ncudual 130 "$v" --ungated
	done
	grep -E "^###|Duration|pipe_|inst_executed|cycles_elapsed|Issue Slots Busy|No Eligible|Eligible Warps|stalled_(barrier|wait|long|math|short|mio|dispatch|sleeping)" "$OUT/ncu_dual.txt" | tee "$OUT/profepi.txt"
	pack
	;;
stm)
	# Step 31: the epilogue's staging by f16x2 conversions and stmatrix
	# (WG_STM), both problems' best variants with it against without it,
	# then its family combinations. Builds: bin/web, bin/engine.test.
	bestvars
	tests d_stm_tests nvfp4_dual_gemm "$E&staging=stmatrix" "$E"
	tests g_stm_tests nvfp4_group_gemm "$G&staging=stmatrix" "$G"
	grep -E "WRONG|FAIL|mismatch|error" "$OUT/tests.log" | head -5
	BENCH_MAX=65 bench d_stm nvfp4_dual_gemm "$E&staging=stmatrix" "$E"
	BENCH_MAX=170 bench g_stm nvfp4_group_gemm "$G&staging=stmatrix" "$G"
	TITLE="staging=stmatrix (WG_STM) against the best variants" summarize
	knobfamily staging=stmatrix 160
	pack
	;;
stmrung)
	# Step 31's rung: the group best with staging=stmatrix against the
	# baseline. Builds: bin/web.
	bestvars
	BENCH_MAX=230 bench g_stm_rung nvfp4_group_gemm "$G&staging=stmatrix"
	TITLE="staging=stmatrix: the group rung against the baseline" summarize
	pack
	;;
skprof)
	# Step 33 (kernel-notes): where the dual's stream-K shapes lose. E
	# against its own modules with whole tiles on bench3-4; ncu of E on
	# bench2-4 and of the whole-tile modules (active cycles over the SMs,
	# L2, stalls). Builds: bin/web.
	bestvars
	N3='wgmma?decode=prmt&tokens=once&overlap=pdl&epilogue=split'                                # E's narrow module, whole tiles
	W4='wgmma?tile_n=128&stages=2&registers=split&decode=prmt&tokens=once&overlap=pdl&epilogue=split' # E's wide module, whole tiles
	echo '[{"m":[256],"n":3072,"k":4096}]' >/tmp/b3.json
	echo '[{"m":[512],"n":3072,"k":7168}]' >/tmp/b4.json
	step d_b3_whole 70 bench.log ./bin/web bench --problem nvfp4_dual_gemm --variant "$N3" --baseline "$E" \
		--shapes /tmp/b3.json --device 0 --cache-dir "$C" --max-time 60s --json "$R/d_b3_whole.json"
	step d_b4_whole 70 bench.log ./bin/web bench --problem nvfp4_dual_gemm --variant "$W4" --baseline "$E" \
		--shapes /tmp/b4.json --device 0 --cache-dir "$C" --max-time 60s --json "$R/d_b4_whole.json"
	NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
	m=gpu__time_duration.sum,sm__cycles_active.min,sm__cycles_active.avg,sm__cycles_active.max,sm__cycles_elapsed.max,lts__t_sector_hit_rate.pct,dram__bytes_read.sum,dram__bytes_write.sum,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_shared_cycles_active.avg.pct_of_peak_sustained_active
	for x in "E b4 $E" "W4 b4 $W4" "E b2 $E" "E b3 $E" "N3 b3 $N3"; do
		set -- $x
		echo "### $1 $2" >>"$OUT/ncu_sk.txt"
		NCU_MAX=40 ncubench "ncu_$1_$2" 80 ncu_sk.txt nvfp4_dual_gemm "$3" "/tmp/$2.json" -k regex:wg_dual_gemm \
			--launch-skip 10 --launch-count 1 --section SchedulerStats --section WarpStateStats --metrics "$m"
	done
	grep -E "^###|gpu__time|sm__cycles|lts__t_sector_hit|dram__bytes|pipe_|No Eligible|Eligible Warps|Active Warps|stalled_(barrier|wait|long|math|short|mio|dispatch|sleeping|branch|membar|lg)" "$OUT/ncu_sk.txt" >"$OUT/skprof.txt"
	TITLE="skprof: whole tiles against stream-K on bench3-4" summarize
	pack
	;;
tl)
	# Step 33 (kernel-notes): where a launch's time goes outside the
	# mainloop. The WG_TL build (bin/web_tl.gz: bash dev/gpucall/expbuild.sh
	# tl WG_TL=1) prints each block's marks' spread (WGTL lines) at launches
	# 2, 30 and 60: the dual best on bench1-4, the group best on bench1-4;
	# then tall's tests and its pairing with the dual best, and the
	# stmatrix dual modules' ptxas. Builds: bin/web, bin/web_tl.gz.
	bestvars
	unpackexp
	benchshapes
	tlruns tl "d1 nvfp4_dual_gemm b1 $E" "d2 nvfp4_dual_gemm b2 $E" "d3 nvfp4_dual_gemm b3 $E" "d4 nvfp4_dual_gemm b4 $E" \
		"g1 nvfp4_group_gemm g1 $GS" "g2 nvfp4_group_gemm g2 $GS" "g3 nvfp4_group_gemm g3 $GS" "g4 nvfp4_group_gemm g4 $GS"
	tests d_tall_tests nvfp4_dual_gemm "$DT" "$E"
	BENCH_MAX=70 bench d_tall nvfp4_dual_gemm "$DT" "$E"
	ptxas dnstm -DDUAL=1 -DSTAGES=3 -DWG_CONS=2 -DWG_DEC=1 -DWG_MB=1 -DWG_PDL=1 -DWG_RS=4 -DWG_TM=128 -DWG_TOK=1 -DWG_EPI=1 -DWG_STM=1
	ptxas dnepi -DDUAL=1 -DSTAGES=3 -DWG_CONS=2 -DWG_DEC=1 -DWG_MB=1 -DWG_PDL=1 -DWG_RS=4 -DWG_TM=128 -DWG_TOK=1 -DWG_EPI=1
	ptxsummary
	TITLE="tl: the launches' timelines; tile_m=auto against the dual best" summarize
	pack
	;;
ranges)
	# Step 33 (kernel-notes): ranges=cost on the group best (GS): tests,
	# paired with GS on bench1-2 (bench3-4 run whole tiles: the same
	# module), the WG_TL marks with it, group bench3 under stream-K with it
	# against whole tiles, its family combinations. Builds: bin/web,
	# bin/engine.test, bin/web_tl.gz.
	bestvars
	unpackexp
	GR="$GS&ranges=cost"
	benchshapes
	tests g_ranges_tests nvfp4_group_gemm "$GR" "$GS"
	step g_ranges 110 bench.log ./bin/web bench --problem nvfp4_group_gemm --variant "$GR" --baseline "$GS" \
		--shapes /tmp/g12.json --device 0 --cache-dir "$C" --max-time 100s --json "$R/g_ranges.json"
	tlruns tl "gr1 nvfp4_group_gemm g1 $GR" "gr2 nvfp4_group_gemm g2 $GR"
	step g3_skr 70 bench.log ./bin/web bench --problem nvfp4_group_gemm --variant "${GR/autohybrid/streamk}" --baseline "$GS" \
		--shapes /tmp/tl_g3.json --device 0 --cache-dir "$C" --max-time 60s --json "$R/g3_skr.json"
	TITLE="ranges=cost against the group best" summarize
	knobfamily ranges=cost 150 '^TestWgmmaFamily$/^nvfp4_group_gemm$'
	pack
	;;
tl2)
	# Step 33 (kernel-notes): every block's WG_TL marks and SM (WG_TL=2,
	# bin/web_tl2.gz: bash dev/gpucall/expbuild.sh tl2 WG_TL=2) for E on
	# bench4 and bench2 and GS on bench1; then tile_m=auto's family
	# combinations and rung against the baseline, and the best variants'
	# resources. Builds: bin/web, bin/engine.test, bin/web_tl2.gz.
	bestvars
	unpackexp
	benchshapes
	tlruns tl2 "d4 nvfp4_dual_gemm b4 $E" "d2 nvfp4_dual_gemm b2 $E" "g1 nvfp4_group_gemm g1 $GS"
	BENCH_MAX=70 bench d_tall_rung nvfp4_dual_gemm "$DT"
	TITLE="tl2: every block's marks; tile_m=auto against the baseline" summarize
	knobfamily tile_m=auto 150 '^TestWgmmaFamily$/^nvfp4_dual_gemm$'
	step resources 150 resources.log ./bin/engine.test -test.v -test.timeout 150s -test.run '^TestBestVariantResources$'
	pack
	;;
ranges2)
	# Step 33 (kernel-notes): WG_TL=2's piece marks (bin/web_tl2.gz) for E
	# on bench4 and GS on bench1; GS&ranges=cost (a 64-token chunk at 0.84)
	# paired with GS on bench1-2; the best variants' resources with the
	# tall modules. Builds: bin/web, bin/engine.test, bin/web_tl2.gz.
	bestvars
	unpackexp
	benchshapes
	tlruns tl2 "d4 nvfp4_dual_gemm b4 $E" "g1 nvfp4_group_gemm g1 $GS"
	step g_ranges2 110 bench.log ./bin/web bench --problem nvfp4_group_gemm --variant "$GS&ranges=cost" --baseline "$GS" \
		--shapes /tmp/g12.json --device 0 --cache-dir "$C" --max-time 100s --json "$R/g_ranges2.json"
	TITLE="ranges=cost at 0.84 against the group best" summarize
	step resources 150 resources.log ./bin/engine.test -test.v -test.timeout 150s -test.run '^TestBestVariantResources$'
	pack
	;;
final13)
	# Session 13's closing call: the PyTorch peers, then each problem's
	# best variant against the baseline in the same call (the dual's new
	# best, tile_m=auto; the group's, unchanged since session 12).
	# Builds: bin/web.
	bestvars
	peers
	best 13 "$DT" "$GS" 170
	TITLE="session 13: the peers and the best variants against the baseline" summarize
	pack
	;;
live)
	# Step 34 (kernel-notes): token_rows=live on the group best (GS):
	# tests, paired with GS on every benchmark shape, its family
	# combinations. Builds: bin/web, bin/engine.test.
	bestvars
	tests g_live_tests nvfp4_group_gemm "$GS&token_rows=live" "$GS"
	BENCH_MAX=170 bench g_live nvfp4_group_gemm "$GS&token_rows=live" "$GS"
	TITLE="token_rows=live against the group best" summarize
	knobfamily token_rows=live 150 '^TestWgmmaFamily$/^nvfp4_group_gemm$'
	pack
	;;
srcbest)
	# Session 14's next step for the main loop (kernel-notes, "Where session
	# 14 leaves issue 11"): stall samples and executed instructions per SASS
	# line of each best variant's main loop, one launch each: the dual best
	# on bench1 (whole narrow tiles), the group best on bench1 (hybrid),
	# summarized per opcode (dev/gpucall/srcsum.py) into $OUT/srcsum.txt; the
	# CSVs go into results.tar.gz. Builds: bin/web.
	bestvars
	benchshapes
	srcprof ""
	pack
	;;
final15)
	# Session 15's closing call, after step 42 (the consumers' chunk loop
	# with fewer instructions, now the only form): both best variants' tests
	# and each against the baseline on every benchmark shape (the group's
	# baseline is slow: 170 s), the PyTorch peers in the same call, then the
	# dual's weights=shared combinations (the one path whose accumulators
	# stay at 2^-14). Builds: bin/web, bin/engine.test.
	bestvars
	tests d_best15_tests nvfp4_dual_gemm "$DT" baseline
	tests g_best15_tests nvfp4_group_gemm "$GS" baseline
	best 15 "$DT" "$GS" 170
	peers
	TITLE="session 15: both bests (step 42's loop) against the baseline; the peers" summarize
	knobfamily weights=shared 120 '^TestWgmmaFamily$/^nvfp4_dual_gemm$'
	pack
	;;
tokprof)
	# Where the token pass's ~3 us go on the short shapes (kernel-notes,
	# "Where session 17 leaves issue 11"): ncu of one wg_tokens launch of the
	# group best on bench4 and bench3 and of the dual best on bench3 (ncu's
	# cold caches, the launch alone), with stall samples per SASS line
	# ($OUT/tok_NAME.csv) and the details page ($OUT/tok_NAME.txt).
	# Builds: bin/web.
	bestvars
	benchshapes
	NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
	for v in "g4|nvfp4_group_gemm|g4|$GS" "g3|nvfp4_group_gemm|g3|$GS" "d3|nvfp4_dual_gemm|b3|$DT"; do
		IFS='|' read -r name prob shp var <<<"$v"
		step "ncu_tok_$name" 120 ncu_tok.log "$NCU" -k regex:wg_tokens --launch-skip 10 --launch-count 1 \
			--section SpeedOfLight --section WarpStateStats --section LaunchStats --section SourceCounters \
			--import-source no -f -o "/tmp/tok_$name" \
			./bin/web bench --problem "$prob" --aa --baseline "$var" --ungated --shapes "/tmp/tl_$shp.json" \
			--device 0 --cache-dir "$C" --max-time 60s --json "$R/tok_$name.json"
		step "ncu_tokpage_$name" 60 ncu_tok.log sh -c "\"$NCU\" -i /tmp/tok_$name.ncu-rep --page details >\"$OUT/tok_$name.txt\"; \"$NCU\" -i /tmp/tok_$name.ncu-rep --page source --csv --print-source sass >\"$OUT/tok_$name.csv\""
		grep -E "Duration|Elapsed Cycles|stall|Registers|Grid Size|Block Size|Waves" "$OUT/tok_$name.txt" | head -12
	done
	pack
	;;
pfptx)
	# Step 48: why prefetch=next slows the group best's mainloop: ptxas's
	# report and the SASS of the group best's module (three consumers,
	# fit64, hybrid stream-K, stmatrix) with and without WG_PF, local-memory
	# instructions counted. Builds: none (nvcc on the GPU machine).
	gs="-DDUAL=0 -DSTAGES=3 -DWG_CONS=3 -DWG_CREGS=160 -DWG_DEC=1 -DWG_FIT=2 -DWG_MB=1 -DWG_PDL=1 -DWG_RS=4 -DWG_SK=2 -DWG_STM=1 -DWG_TM=128 -DWG_TOK=1"
	for pf in 0 1; do
		ptxas "gs_pf$pf" $gs -DWG_PF=$pf
		sassmix "gs_pf$pf"
		command -v cuobjdump >/dev/null && cuobjdump -sass /tmp/wg.cubin >"$OUT/gs_pf$pf.sass" 2>>"$OUT/sass.log"
		echo "gs_pf$pf LDL/STL: $(grep -cE '\b(LDL|STL)\b' "$OUT/gs_pf$pf.sass")" >>"$OUT/sass.log"
	done
	ptxsummary
	tail -40 "$OUT/sass.log"
	;;
pf17)
	# Step 48 (kernel-notes): prefetch=next on the group best again, on this
	# session's loop: its tests, paired with the best on every benchmark
	# shape, and both variants' WG_TL timelines on group bench2 (four to
	# five pieces per block: a ring restart at each). Builds: bin/web,
	# bin/web_tl.gz (bash dev/gpucall/expbuild.sh tl WG_TL=1).
	bestvars
	unpackexp
	benchshapes
	tests g_pf17_tests nvfp4_group_gemm "$GS&prefetch=next" "$GS"
	BENCH_MAX=150 bench g_pf17 nvfp4_group_gemm "$GS&prefetch=next" "$GS"
	tlruns tl "g2pf nvfp4_group_gemm g2 $GS&prefetch=next" "g2 nvfp4_group_gemm g2 $GS"
	TITLE="step 48: prefetch=next on the group best" summarize
	pack
	;;
res17)
	# Session 17's close: the compiler's resource report of the best
	# variants' modules (TestBestVariantResources; the tall tile changed in
	# step 47), then the WG_TL build's launch timelines of the group best on
	# its four shapes and the dual best on bench4: where the group's time
	# goes outside its mainloop now. Builds: bin/engine.test, bin/web_tl.gz
	# (bash dev/gpucall/expbuild.sh tl WG_TL=1).
	bestvars
	unpackexp
	benchshapes
	step resources 120 resources.log ./bin/engine.test -test.v -test.run '^TestBestVariantResources$'
	grep -E "wgmma|PASS|FAIL" "$OUT/resources.log" | cut -c1-400 | head -30
	tlruns tl "g3 nvfp4_group_gemm g3 $GS" "g4 nvfp4_group_gemm g4 $GS" "g1 nvfp4_group_gemm g1 $GS" \
		"g2 nvfp4_group_gemm g2 $GS" "d4 nvfp4_dual_gemm b4 $DT"
	pack
	;;
marks3)
	# The group best's chunk with all three consumers marked (WG_STAMP
	# kinds 5-11, 12-18 and 26-32) and its piece boundaries (19-23), block
	# 0 on bench2 and bench1 (bin/web_stamp from expbuild.sh stamp
	# WG_STAMP=1), summarized by stamps.py into $OUT/stamps.txt.
	bestvars
	unpackexp
	benchshapes
	for s in g2 g1; do
		stampbench "m3$s" ./bin/web_stamp "$GS" nvfp4_group_gemm "/tmp/tl_$s.json"
		python3 dev/gpucall/stamps.py "$OUT/stamp_m3$s.txt" >>"$OUT/stamps.txt" 2>&1
	done
	pack
	;;
db2)
	# Step 59: the whole-chunk consumer pipeline (pipeline=chunks, WG_DB:
	# chunk j+1 decoded into a second fragment set while chunk j's eight
	# wgmmas run) on the group's two-consumer tile, which the best runs on
	# bench3-4 (tile_n=auto picks it there) and which bench1-2 can run with
	# tile_n=128. Tests; paired with the best (bench3-4: the same tile with
	# the halves pipeline) and, on bench1-2, with the same tile's halves;
	# the best's stamps on bench3 (the two-consumer halves chunk).
	bestvars
	unpackexp
	benchshapes
	C2="wgmma?tail_width=fit64&registers=split&decode=prmt&tokens=once&overlap=pdl&staging=stmatrix&pipeline=chunks"
	H128="wgmma?tile_n=128&tail_width=fit64&schedule=autohybrid&registers=split&decode=prmt&tokens=once&overlap=pdl&staging=stmatrix"
	C128="$H128&pipeline=chunks"
	tests g_db_tests nvfp4_group_gemm "$C2" "$GS"
	grep -E "WRONG|FAIL|mismatch|rror" "$OUT/tests.log" | head -5
	BENCH_MAX=100 BENCH_SHAPES=/tmp/g34.json bench g_db34 nvfp4_group_gemm "$C2" "$GS"
	BENCH_MAX=100 BENCH_SHAPES=/tmp/g12.json bench g_db12h nvfp4_group_gemm "$C128" "$H128"
	BENCH_MAX=100 BENCH_SHAPES=/tmp/g12.json bench g_db12best nvfp4_group_gemm "$C128" "$GS"
	stampbench m2g3 ./bin/web_stamp "$GS" nvfp4_group_gemm /tmp/tl_g3.json
	python3 dev/gpucall/stamps.py "$OUT/stamp_m2g3.txt" >>"$OUT/stamps.txt" 2>&1
	TITLE="step 59: pipeline=chunks on the two-consumer tile" summarize
	pack
	;;
skel)
	# Step 62: the group best's chunk (WG_STAMP marks, bench2, launch 0: the
	# WG_EXP builds' wrong sums stop their bench at its first check) in the
	# full stamp build and with parts of the kernel taken out: WG_EXP 8 (no
	# weight copies or decode), 264 (and no token copies: the barriers and
	# the wgmmas alone), 4 (no wgmmas: everything else). Builds here:
	# expbuild.sh stamp WG_STAMP=1; stampe8, stampe264, stampe4 with
	# WG_STAMP=1 WG_EXP=8, 264, 4.
	bestvars
	unpackexp
	benchshapes
	for b in "" e8 e264 e4; do
		stampbench "g2$b" "./bin/web_stamp$b" "$GS" nvfp4_group_gemm /tmp/tl_g2.json
		echo "== g2$b" >>"$OUT/stamps.txt"
		python3 dev/gpucall/stamps.py --launch 0 "$OUT/stamp_g2$b.txt" >>"$OUT/stamps.txt" 2>&1
	done
	pack
	;;
struct)
	# Where bench2's structure costs (kernel-notes, "Where session 20 leaves
	# issue 11"): the group best A/A on bench2 and on four variants of it,
	# each changing one thing: N 7104 (37 x 192, no partial weight block),
	# K 7168 (56-chunk tiles, fewer boundaries per chunk), every group at
	# 128 tokens (no tails), and all three at once. The fraction of the
	# floor of each says what each part costs.
	bestvars
	cat >/tmp/st.json <<'JSON'
[{"m":[40,76,168,72,164,148,196,160],"n":7168,"k":2048},
 {"m":[40,76,168,72,164,148,196,160],"n":7104,"k":2048},
 {"m":[40,76,168,72,164,148,196,160],"n":7168,"k":7168},
 {"m":[128,128,128,128,128,128,128,128],"n":7168,"k":2048},
 {"m":[128,128,128,128,128,128,128,128],"n":7104,"k":7168}]
JSON
	# STRUCT_FROM=N: only the shapes from the N-th (0-based) on.
	python3 -c "import json,sys; d=json.load(open('/tmp/st.json')); json.dump(d[int(sys.argv[1]):], open('/tmp/st.json','w'))" "${STRUCT_FROM:-0}"
	BENCH_MAX=240 BENCH_SHAPES=/tmp/st.json bench g_struct nvfp4_group_gemm "$GS" "$GS"
	grep -E "^[0-9] " "$OUT/bench.log" >"$OUT/rows.txt"
	pack
	;;
final16 | final17 | final18)
	# A session's measurement of both bests (session 16: after step 44, the
	# weight copies from per-piece sources; session 17: after step 47, two
	# chunks ahead in two-slot rings; session 18: the same kernel again, on
	# another machine, after steps 50-52 left it unchanged): both best variants' tests, each
	# against the baseline on every benchmark shape (the group's baseline is
	# slow: 170 s), the PyTorch peers in the same call. Builds: bin/web.
	n=${MODE#final}
	bestvars
	tests "d_best${n}_tests" nvfp4_dual_gemm "$DT" baseline
	tests "g_best${n}_tests" nvfp4_group_gemm "$GS" baseline
	best "$n" "$DT" "$GS" 170
	peers
	TITLE="session $n: both bests against the baseline; the peers" summarize
	pack
	;;
tok2)
	# Step 45 (kernel-notes): the token pass with two threads per row, in
	# bin/web (this tree) against bin/web_ref.gz (the commit before it:
	# git worktree add /tmp/ref HEAD~1, then go build there and gzip): both
	# bests' tests in the new build, then each best against the baseline
	# in both builds, the dual on every shape, the group on bench3-4 (the
	# short shapes, where the pass is the largest share) and then bench1-2.
	# Builds: bin/web, bin/web_ref.gz.
	bestvars
	unpackexp
	benchshapes
	tests d_tok2_tests nvfp4_dual_gemm "$DT" baseline
	tests g_tok2_tests nvfp4_group_gemm "$GS" baseline
	for b in new ref; do
		w=./bin/web
		[ "$b" = ref ] && w=./bin/web_ref
		WEB=$w BENCH_MAX=60 bench "d_$b" nvfp4_dual_gemm "$DT"
	done
	xbuilds g34 nvfp4_group_gemm "$GS" /tmp/g34.json 50 ./bin/web ./bin/web_ref
	xbuilds g12 nvfp4_group_gemm "$GS" /tmp/g12.json 90 ./bin/web ./bin/web_ref
	TITLE="step 45: the token pass two threads per row (bin/web) and the commit before (bin/web_ref)" summarize
	pack
	;;
l2abl)
	# Step 46 (kernel-notes; prepared in session 16, not yet run): is the
	# token stream (the fp16 stages each block reads through L2) what holds
	# the main loop near 60% of the tensor peak? WG_STAMP builds with and
	# without WG_EXP=256 (the producer arrives without copying: no token
	# stage crosses L2): block 0's whole-launch clock (WGCLOCK) and every
	# block's span (WGSPAN) in launch 0 (the WG_EXP build's sums are wrong,
	# so its bench stops at the first check) of the dual best's tall tile
	# (bench2), its narrow tile (M256) and the group best on bench1; then
	# ncu of the dual best's two tiles with L2 read counters (smemprof).
	# With a third build, stampe32 (WG_STAMP=1 WG_EXP=32: the consumers copy
	# no weights), the same for the weights' stream. Builds: bin/web, and
	# from dev/gpucall/expbuild.sh: stamp WG_STAMP=1, stampe256 WG_STAMP=1
	# WG_EXP=256, stampe32 WG_STAMP=1 WG_EXP=32.
	unpackexp
	bestvars
	benchshapes
	l2ablate
	pack
	;;
smem16)
	# Where session 15 leaves issue 11 (kernel-notes): the dual best's tall
	# (bench2) and narrow (bench1) whole tiles under ncu, one launch each:
	# is the shared-memory pipe what holds both at ~58% of the tensor peak?
	# Then TestWgmmaFamily's cover on step 42's code with what is left (the
	# dual's half first: fewer combinations). Builds: bin/web, bin/engine.test.
	bestvars
	smemprof
	pack
	family nvfp4_dual_gemm
	family nvfp4_group_gemm
	pack
	;;
tokblock)
	# Step 36 (kernel-notes): tokens=block (no token pass) against each
	# problem's best on its short shapes and one long one. Builds: bin/web.
	bestvars
	benchshapes
	for x in "d3 nvfp4_dual_gemm b3 wgmma?schedule=streamk&decode=prmt&epilogue=split $DT" \
		"d1 nvfp4_dual_gemm b1 wgmma?decode=prmt&epilogue=split $DT" \
		"g4 nvfp4_group_gemm g4 wgmma?tail_width=fit64&registers=split&decode=prmt&staging=stmatrix $GS" \
		"g3 nvfp4_group_gemm g3 wgmma?tail_width=fit64&registers=split&decode=prmt&staging=stmatrix $GS"; do
		set -- $x
		step "tb_$1" 60 bench.log ./bin/web bench --problem "$2" --variant "$4" --baseline "$5" \
			--shapes "/tmp/tl_$3.json" --device 0 --cache-dir "$C" --max-time 50s --json "$R/tb_$1.json"
	done
	TITLE="tokens=block against the best on single shapes" summarize
	pack
	;;
pro)
	# Step 39 (kernel-notes): overlap=prologue in each best in place of
	# overlap=pdl: tests, paired with the best (both problems), its family
	# combinations. Builds: bin/web, bin/engine.test.
	bestvars
	TP=${DT/overlap=pdl/overlap=prologue}
	GP=${GS/overlap=pdl/overlap=prologue}
	tests d_pro_tests nvfp4_dual_gemm "$TP" "$DT"
	tests g_pro_tests nvfp4_group_gemm "$GP" "$GS"
	BENCH_MAX=70 bench d_pro nvfp4_dual_gemm "$TP" "$DT"
	BENCH_MAX=150 bench g_pro nvfp4_group_gemm "$GP" "$GS"
	TITLE="overlap=prologue against each best" summarize
	knobfamily overlap=prologue 120
	pack
	;;
tall)
	# Step 32 (kernel-notes): the dual GEMM's tile_m=auto paired with the
	# dual best (E), after its tests; ptxas of the dual modules with
	# WG_STM (step 31's unexplained 0.982x: the narrow tile at the even
	# budget first); the best variants' resources, the group's new best
	# included; tile_m=auto's family combinations with what is left.
	# Builds: bin/web, bin/engine.test.
	bestvars
	ptxas dnstm -DDUAL=1 -DSTAGES=3 -DWG_CONS=2 -DWG_DEC=1 -DWG_MB=1 -DWG_PDL=1 -DWG_RS=4 -DWG_TM=128 -DWG_TOK=1 -DWG_EPI=1 -DWG_STM=1
	ptxas dnepi -DDUAL=1 -DSTAGES=3 -DWG_CONS=2 -DWG_DEC=1 -DWG_MB=1 -DWG_PDL=1 -DWG_RS=4 -DWG_TM=128 -DWG_TOK=1 -DWG_EPI=1
	ptxas dwstm $DWDEFS -DWG_EPI=1 -DWG_STM=1
	ptxsummary
	tests d_tall_tests nvfp4_dual_gemm "$DT" "$E"
	BENCH_MAX=70 bench d_tall nvfp4_dual_gemm "$DT" "$E"
	step resources 150 resources.log ./bin/engine.test -test.v -test.timeout 150s -test.run '^TestBestVariantResources$'
	TITLE="tile_m=auto (the dual's 256-token tile per shape) against the dual best" summarize
	knobfamily tile_m=auto 150 '^TestWgmmaFamily$/^nvfp4_dual_gemm$'
	pack
	;;
*)
	echo "usage: dual.sh MODE [TOTAL]: MODE is one of the case labels in this file" >&2
	exit 2
	;;
esac
{
	grep -E 'registers|spill|C75|error' "$OUT/ptxas.log" 2>/dev/null | cut -c1-200
	grep -E -- '^(---|ok|FAIL|PASS)|WRONG|build:|panic' "$OUT/family.log" "$OUT/tests.log" 2>/dev/null | cut -c1-300
	grep -c 'shapes correct' "$OUT/family.log" 2>/dev/null
} >>"$OUT/summary.md"
pack
head -120 "$OUT/summary.md"
echo "done in $(($(date +%s) - START))s"
