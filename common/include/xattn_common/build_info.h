#ifndef XATTN_COMMON_BUILD_INFO_H
#define XATTN_COMMON_BUILD_INFO_H
/* What a binary was built from, taken at build time (common/cmake/
 * build_info.cmake), shared by every tool that reports it: `xattn info`,
 * results (bench), tuned headers (tune). */

#ifdef __cplusplus
extern "C" {
#endif

/* Commit of the build: 12 hex digits, or "nogit" outside a git tree. */
const char *xc_build_commit(void);
/* 1 when the tree was dirty at build time or `git status` of the source tree
 * (run now, when it still is a git work tree) shows changes to tracked
 * files; 0 clean; -1 unknown (nogit). */
int xc_build_dirty(void);
const char *xc_build_compiler(void);   /* "GNU 12.2.0" */
const char *xc_build_cflags(void);     /* C flags of the build type */
const char *xc_build_source_dir(void); /* absolute source tree of the build */

#ifdef __cplusplus
}
#endif

#endif
