# katrace-export: turns spools (a killed job's, or any left behind) into traces, offline.
# EXPORT_LIB_OBJS is the export stage as the plugin links it, usable outside the .so too. It has
# no NCCL logger glue (plugin/logger.*): its warnings go through common/warning.h, to stderr here.
EXPORT_LIB_OBJS := $(patsubst %.cc,$(BUILD)/obj/%.o,$(wildcard plugin/export/*.cc)) \
    $(BUILD)/obj/common/output_file.o $(BUILD)/obj/common/file_writer.o $(BUILD)/obj/common/summary_table.o \
    $(BUILD)/obj/common/busy_time.o $(BUILD)/obj/common/activity_summary.o $(BUILD)/obj/common/crc32.o
EXPORT_LIB_LIBS := -lz -llz4 -pthread
KATRACE_EXPORT_BIN := $(BUILD)/bin/katrace-export
KATRACE_EXPORT_OBJS := $(patsubst %.cc,$(BUILD)/obj/%.o,$(wildcard tools/export/*.cc))

$(KATRACE_EXPORT_BIN): $(KATRACE_EXPORT_OBJS) $(EXPORT_LIB_OBJS)
	@mkdir -p $(dir $@)
	$(CXX) $(LDFLAGS) -o $@ $^ $(EXPORT_LIB_LIBS)

ALL_TARGETS += $(KATRACE_EXPORT_BIN)
