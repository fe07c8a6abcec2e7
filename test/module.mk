# Each test suite adds itself in its own fragment test/<suite>.mk (a GoogleTest binary under
# $(BUILD)/test appended to TEST_BINS).
include $(filter-out test/module.mk,$(wildcard test/*.mk))
