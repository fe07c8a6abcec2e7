# Each tool has its own folder and fragment.
include $(wildcard tools/*/module.mk)
