/* Whether a file may be trusted by a program that reads or runs it: a
 * config, a program kenaf-simd spawns, a key. Such a file must be owned by
 * root or by the user the program runs as, and nobody else may write it
 * (a world-writable config could name any program to spawn as that user);
 * a key must also be unreadable by group and others. Checked on the
 * file's own stat (an open file's fstat, so what is checked is what is
 * read), not its directories. */
#ifndef KN_FILETRUST_H
#define KN_FILETRUST_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#define KN_FILETRUST_SECRET 1u /* group and others may not read it either */

/* 0 when st (of a file owned by `self` or root) passes; -1 with *why
 * saying what is wrong ("owner uid 1000 (neither root nor uid 0), mode
 * 0666 (writable by group and others)"). */
int kn_filetrust_stat(const struct stat *st, uid_t self, unsigned flags, char *why, size_t len);

/* What is expected, for the message: "owned by root or uid 998 and
 * writable by its owner only" (with SECRET: "... and readable and
 * writable by its owner only"). */
void kn_filetrust_expected(uid_t self, unsigned flags, char *buf, size_t len);

/* stat(path) (following links) and kn_filetrust_stat with geteuid();
 * a stat failure gives -1 with the path's errno text in *why. */
int kn_filetrust_path(const char *path, unsigned flags, char *why, size_t len);

#endif
