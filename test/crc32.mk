# The spool's CRC-32 (common/crc32.cc) against zlib's.
CRC32_TEST := $(BUILD)/test/test_crc32
$(CRC32_TEST): $(BUILD)/obj/test/test_crc32.o $(BUILD)/obj/common/crc32.o
	@mkdir -p $(dir $@)
	$(CXX) $(LDFLAGS) -o $@ $^ $(GTEST_LIBS) -lz

TEST_BINS += $(CRC32_TEST)
# One thread.
TSAN_SKIPPED_TEST_BINS += $(CRC32_TEST)
