# libFuzzer targets (fuzz/*.cc, built with clang by scripts/run_fuzz.sh, skipped with one line
# when clang or libFuzzer is missing):
#   fuzz_abi_stream    the plugin through its ABI tables (a copy built with the fuzzer's
#                      instrumentation, so that its coverage guides the fuzzing)
#   fuzz_trace_reader  the trace tools' reader
#   fuzz_trace_tools   katrace-check, katrace-stats (and --hang) and katrace-merge on a trace
#   fuzz_spool_export  the export stage on a spool (fuzz/spool_export_input.h; seeded with small
#                      spools of katrace-sim and of a flight recorder crash, uncompressed and LZ4)
# `make fuzz` fuzzes each for FUZZ_SECONDS, `make fuzz-check` for FUZZ_CHECK_SECONDS (not part of
# `make check`, which replays the committed inputs only).
# Inputs that crashed land in fuzz/regressions/, replayed with the seeds of fuzz/corpus/ by
# test_fuzz_replay (test/fuzz.mk), which drives the plain $(PLUGIN_SO).
FUZZ_SECONDS ?= 60
FUZZ_CHECK_SECONDS ?= 15

.PHONY: fuzz fuzz-check
fuzz:
	scripts/run_fuzz.sh $(FUZZ_SECONDS) $(BUILD)

fuzz-check:
	@scripts/run_fuzz.sh $(FUZZ_CHECK_SECONDS) $(BUILD)
