/*
 * store/dump_int.h -- private to store/dump.c and store/load.c: the dump
 * format's version numbers and the names both sides write and read.
 */
#ifndef GSNAP_STORE_DUMP_INT_H
#define GSNAP_STORE_DUMP_INT_H

#include "store/store_int.h"

/* 2: snapshot lines carry the hop-set kind and caps, the 'end' line counts
 * the extensions' lines (attribute tables and rows, features/dump_attr.c).
 * Load still reads format 1. */
#define DUMP_FORMAT 2
#define DUMP_FORMAT_MIN 1

static inline const char *gsnap_dump__keep_name(unsigned keep) {
    return keep == GSNAP_KEEP_IN ? "in" : keep == GSNAP_KEEP_OUT ? "out" : "both";
}

#endif
