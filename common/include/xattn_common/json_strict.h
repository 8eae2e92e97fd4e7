/* Strict JSON parsing for every file the tools read (case.json, suites, the
 * tune cache): cJSON alone accepts trailing garbage after the value ("{...}x")
 * and keeps duplicate keys (lookups see the first one), which hides mistakes in
 * hand-written files. */
#ifndef XATTN_COMMON_JSON_STRICT_H
#define XATTN_COMMON_JSON_STRICT_H

#include <stddef.h>

#include <cjson/cJSON.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Parses exactly len bytes of text as one JSON value (whitespace may follow
 * it, nothing else; NUL bytes are refused) with no duplicate key in any
 * object. Returns the tree, or NULL with one line in why: "invalid JSON near
 * byte 12", "trailing data after the JSON value at byte 40", "duplicate key
 * 'name' at workloads[2]". */
cJSON *xc_json_parse_strict(const char *text, size_t len, char *why, size_t whylen);

/* Copies src into dst (at most dstlen bytes with the NUL) with every byte
 * that is not printable ASCII or part of valid UTF-8 written as \xNN: names
 * taken from a file are quoted in error lines without putting raw bytes on a
 * terminal. Returns dst. */
char *xc_printable(char *dst, size_t dstlen, const char *src);

#ifdef __cplusplus
}
#endif
#endif
