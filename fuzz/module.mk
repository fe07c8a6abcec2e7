# libFuzzer targets (fuzz/*.cc, built with clang by scripts/run_fuzz.sh, skipped with one line
# when clang or libFuzzer is missing): fuzz_abi_stream drives the real $(PLUGIN_SO) through its
# ABI tables, fuzz_trace_reader the trace tools' reader, fuzz_trace_tools katrace-check, -stats and
# -merge on a trace, fuzz_spool_export the export stage on a spool (fuzz/spool_export_input.h;
# its seeds are small spools of katrace-sim and of a flight recorder crash, written uncompressed
# and with LZ4). `make fuzz` fuzzes each for
# FUZZ_SECONDS; `make check` runs a bounded FUZZ_CHECK_SECONDS each. Inputs that crashed land in
# fuzz/regressions/, replayed with the seeds of fuzz/corpus/ by test_fuzz_replay (test/fuzz.mk).
FUZZ_SECONDS ?= 60
FUZZ_CHECK_SECONDS ?= 15

.PHONY: fuzz fuzz-check
fuzz: $(PLUGIN_SO)
	scripts/run_fuzz.sh $(FUZZ_SECONDS) $(BUILD) $(PLUGIN_SO)

fuzz-check: $(PLUGIN_SO)
	@scripts/run_fuzz.sh $(FUZZ_CHECK_SECONDS) $(BUILD) $(PLUGIN_SO)
