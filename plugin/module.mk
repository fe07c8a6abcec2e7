# The plugin: build/libnccl-profiler-katrace.so. Exports only the ncclProfiler_v{6,5,4} tables.
PLUGIN_SO := $(BUILD)/libnccl-profiler-katrace.so
PLUGIN_SRCS := $(wildcard plugin/*.cc plugin/capture/*.cc plugin/export/*.cc) common/summary_table.cc common/file_writer.cc common/output_file.cc \
    common/busy_time.cc common/activity_summary.cc common/event_mask.cc common/duration.cc common/crc32.cc
PLUGIN_OBJS := $(PLUGIN_SRCS:%.cc=$(BUILD)/obj/%.o)

$(PLUGIN_SO): $(PLUGIN_OBJS)
	@mkdir -p $(dir $@)
	$(CXX) -shared $(LDFLAGS) -Wl,--version-script=plugin/exports.map -Wl,-z,defs -o $@ $^ -lz -llz4 -ldl

$(PLUGIN_OBJS): CXXFLAGS += -fvisibility=hidden -fvisibility-inlines-hidden
ALL_TARGETS += $(PLUGIN_SO)
# NVTX3 is header-only; it comes with the CUDA toolkit.
$(BUILD)/obj/plugin/nvtx_sink.o: CPPFLAGS += $(if $(CUDA_HOME),-I$(CUDA_HOME)/include)
