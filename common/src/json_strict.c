/* See xattn_common/json_strict.h. */
#include "xattn_common/json_strict.h"

#include <stdio.h>
#include <string.h>

/* First duplicate key below v, with its path written into path; 1 if found. */
static int find_duplicate(const cJSON *v, char *path, size_t cap, size_t at, int depth) {
  if (depth > 2000) return 0; /* cJSON refuses deeper nesting while parsing */
  int i = 0;
  for (const cJSON *c = v->child; c; c = c->next, ++i) {
    size_t n = at;
    if (cJSON_IsObject(v) && c->string) {
      for (const cJSON *d = v->child; d != c; d = d->next)
        if (d->string && !strcmp(d->string, c->string)) {
          char key[64], where[80];
          xc_printable(key, sizeof key, c->string);
          xc_printable(where, sizeof where, at ? path : "the top-level object");
          const int w = snprintf(path, cap, "'%s' in %s", key, where); /* truncation is fine */
          (void)w;
          return 1;
        }
      n += (size_t)snprintf(path + at, cap > at ? cap - at : 0, "%s%s", at ? "." : "", c->string);
    } else {
      n += (size_t)snprintf(path + at, cap > at ? cap - at : 0, "[%d]", i);
    }
    if (n >= cap) n = cap - 1;
    if (find_duplicate(c, path, cap, n, depth + 1)) return 1;
    path[at] = '\0';
  }
  return 0;
}

cJSON *xc_json_parse_strict(const char *text, size_t len, char *why, size_t whylen) {
  const char *nul = memchr(text, '\0', len);
  if (nul) {
    snprintf(why, whylen, "NUL byte at byte %zu", (size_t)(nul - text));
    return NULL;
  }
  const char *end = NULL;
  cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
  if (!root) {
    const char *at = cJSON_GetErrorPtr();
    if (at && at >= text && at <= text + len)
      snprintf(why, whylen, "invalid JSON near byte %zu", (size_t)(at - text));
    else
      snprintf(why, whylen, "invalid JSON");
    return NULL;
  }
  while (end && end < text + len && (*end == ' ' || *end == '\t' || *end == '\n' || *end == '\r')) ++end;
  if (end && end < text + len) {
    snprintf(why, whylen, "trailing data after the JSON value at byte %zu", (size_t)(end - text));
    cJSON_Delete(root);
    return NULL;
  }
  char path[256] = "";
  if (find_duplicate(root, path, sizeof path, 0, 0)) {
    snprintf(why, whylen, "duplicate key %s", path);
    cJSON_Delete(root);
    return NULL;
  }
  return root;
}

char *xc_printable(char *dst, size_t dstlen, const char *src) {
  if (!dstlen) return dst;
  size_t o = 0;
  const unsigned char *s = (const unsigned char *)src;
  while (*s && o + 1 < dstlen) {
    int n = 0; /* length of a valid UTF-8 sequence starting here, 0 if none */
    if (*s >= 0x20 && *s < 0x7f) n = 1;
    else if (*s >= 0xc2 && *s <= 0xdf) n = 2;
    else if (*s >= 0xe0 && *s <= 0xef) n = 3;
    else if (*s >= 0xf0 && *s <= 0xf4) n = 4;
    for (int k = 1; k < n; ++k)
      if ((s[k] & 0xc0) != 0x80) n = 0;
    if (n > 0 && o + (size_t)n < dstlen) {
      memcpy(dst + o, s, (size_t)n);
      o += (size_t)n;
      s += n;
    } else if (n == 0 && o + 4 < dstlen) {
      snprintf(dst + o, dstlen - o, "\\x%02x", *s);
      o += 4;
      s++;
    } else {
      break;
    }
  }
  dst[o] = '\0';
  return dst;
}
