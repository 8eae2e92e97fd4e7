"""xattnperf: shared pieces of the xattn performance tools (compare, history, plot).

One module per responsibility:
  results     load and validate Google Benchmark JSON results, parse row names,
              store files under results/<machine>/<commit>/ without overwriting
  stats       U-test, relative change, geometric mean (reuses gbench when present)
  comparison  turn two result sets into a per-benchmark comparison + text table
  gitbuild    git worktrees and Release builds of a revision
  runner      interleaved A/B runs of two xattn-bench executables
  history     index of stored runs per machine/commit and trends in git-log order
"""
