# Objects shared by the katrace trace tools (included by each tool's module.mk; guarded so it is
# read once): tools/common as one translation unit (tools/module.mk). summary_table, busy_time, activity_summary, event_mask, duration, file_writer
# and output_file live in common/, shared with the plugin.
ifndef KATRACE_TOOLS_COMMON_OBJS
KATRACE_TOOLS_COMMON_OBJS := $(call katrace_unit,tools,common,$(wildcard tools/common/*.cc)) \
    $(BUILD)/obj/common/summary_table.o $(BUILD)/obj/common/busy_time.o \
    $(BUILD)/obj/common/activity_summary.o $(BUILD)/obj/common/event_mask.o $(BUILD)/obj/common/file_writer.o $(BUILD)/obj/common/output_file.o \
    $(BUILD)/obj/common/duration.o
endif
