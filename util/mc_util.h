/*
 * mc_util.h - the small jobs every module needs, done one way: a bounded
 * string append, saturating multiplies, a safe open of a file to read,
 * a small file read whole and the escaping of untrusted text quoted in a
 * message.
 * Pure C, no allocation, safe in slurmstepd.
 */
#ifndef MC_UTIL_H
#define MC_UTIL_H

#include <stdbool.h>
#include <dirent.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <stdarg.h>
#include <sys/types.h>

/*
 * printf at buf + *used, never past buf[len - 1]; buf stays terminated.
 * Returns 0 with *used advanced, or -1 when the text was cut (buf holds
 * what fit, *used = len - 1; a caller that wants whole entries only puts
 * buf[old used] = '\0' back). *used >= len (or len 0) appends nothing.
 */
int mc_appendf(char *buf, size_t len, size_t *used, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/*
 * A printf line appended to an array of lines, char lines[max][len] whose
 * count is *n: at lines[*n], cut to len - 1 characters, while *n < max
 * (then nothing). The explanation (mc_rules.h) and the summary
 * (mc_summary.h) are such arrays, each of its own size.
 */
void mc_lines_add(char *lines, size_t *n, size_t max, size_t len,
		  const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
void mc_lines_vadd(char *lines, size_t *n, size_t max, size_t len,
		   const char *fmt, va_list ap)
	__attribute__((format(printf, 5, 0)));

/*
 * True when s holds a control byte (< 0x20 or 0x7f): a newline, CR or
 * ESC in a value quoted in a message could forge a line of memcore's
 * output or of slurmd's log, or drive the user's terminal. NULL: false.
 */
bool mc_has_ctrl(const char *s);

/*
 * Copy untrusted text s into buf (len bytes, always terminated when len >
 * 0) for quoting in a message: a control byte (< 0x20, 0x7f) becomes \n,
 * \r, \t or \xNN and a backslash \\, so the quote stays on one line and
 * reads back unambiguously; other bytes are copied. At most max bytes of s
 * are read (0: all); text cut for max or len ends in "...". NULL reads as
 * "". Returns buf, so that it can be a printf argument.
 */
const char *mc_escape(const char *s, size_t max, char *buf, size_t len);

/* The buffer for a value the user gave (a path, an option's value) as a
 * message quotes it through mc_escape: cut with "..." past it, so that
 * the reason after it always fits a message (MC_ERR_MAX). */
#define MC_QUOTE_MAX 160

/*
 * msg made one line: its control bytes written as mc_escape writes them
 * (\n, \r, \t, \xNN), every other byte as it is (a backslash too, so a
 * value mc_escape already quoted inside msg reads the same). For a whole
 * message that quotes what a user set (a log line of slurmd, a line on a
 * terminal): nothing in it can forge a second line or drive the terminal.
 * Cut to len - 1 bytes, whole escapes only. Returns buf.
 */
const char *mc_oneline(const char *msg, char *buf, size_t len);

/*
 * s as one word of a POSIX shell command line, for a command memcore
 * prints for the user to paste (the staging command): s itself when it
 * holds only [A-Za-z0-9_@%+=:,./-] and is not empty, else s in single
 * quotes with each ' written '\'' (a path with a blank or a $ then pastes
 * as one argument, its text unexpanded). A control byte is written as
 * mc_escape writes it (\n, \xNN), so the command stays on one line; such
 * a word no longer names the path, which no command line could hold.
 * Returns buf, or "" when the quoted word does not fit in len bytes.
 */
const char *mc_shell_word(const char *s, char *buf, size_t len);

/* a * b, or the type's maximum when the product does not fit: a figure
 * that cannot be had reads as "too much", never as a small wrapped one. */
static inline uint32_t mc_mul_sat32(uint32_t a, uint32_t b)
{
	uint32_t r;

	return __builtin_mul_overflow(a, b, &r) ? UINT32_MAX : r;
}

static inline uint64_t mc_add_sat64(uint64_t a, uint64_t b)
{
	uint64_t r;

	return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
}

static inline uint64_t mc_mul_sat64(uint64_t a, uint64_t b)
{
	uint64_t r;

	return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}

/* mc_open_regular flags. */
#define MC_OPEN_NOFOLLOW 1	/* a symbolic link is refused (ELOOP) */
#define MC_OPEN_SAY_DIR 2	/* a directory: "is a directory" */
#define MC_OPEN_SAY_EISDIR 4	/* a directory: strerror(EISDIR) */

/*
 * Open path read-only to read it whole: O_CLOEXEC, O_NOCTTY and
 * O_NONBLOCK (a FIFO put in place of the file must not hang a daemon),
 * then fstat: a non-regular file or one above max_bytes (0: any size) is
 * refused. Returns the descriptor (its fstat in *st, which may be NULL),
 * or -1 with errno set and err = "[WHAT ]PATH: <strerror>", "... not a
 * regular file" (a directory too, unless a MC_OPEN_SAY_* flag words it)
 * or "... larger than N bytes"; what (e.g. "topology") may be NULL. A
 * path too long for errlen is cut ("...") so that the reason still fits.
 */
int mc_open_regular(const char *what, const char *path, int flags,
		    off_t max_bytes, struct stat *st, char *err,
		    size_t errlen);

/*
 * Whether the directory of the file at absolute path `path` is one only
 * root can write, so that a file root writes there cannot be planted,
 * replaced or renamed by anyone else: after resolving links (realpath),
 * the directory must be owned by root and writable by neither group nor
 * others; every directory above it must be owned by root or by a system
 * account (uid at most MC_SYSTEM_UID_MAX: Debian's prometheus-node-exporter
 * keeps its textfile directory, root's, under /var/lib/prometheus, which
 * the prometheus account owns) and writable by no one else, except that
 * one may be world-writable when root owns it and its sticky bit is set
 * (/tmp: others cannot rename or remove what root put there). A system
 * account above the directory can at most swap it for another directory
 * it holds: root opens it with mc_open_root_dir, which follows no link of
 * another owner and checks the directory it opened, so the swap makes the
 * write fail, never land elsewhere. The directory itself gets no
 * exception: there anyone could create the file before root does, or
 * take the name of its temporary file.
 * Every symbolic link in the path as written must be root's (a user's
 * link passes the resolved check and can be pointed elsewhere). A
 * directory not there yet is judged by the nearest one that is: it must
 * be root's alone, sticky or not (anyone may make a name in /tmp).
 * Returns 0 safe, 1 the directory does not exist (and only root could
 * make it; a write there fails later and says so) or cannot be seen by this
 * process (EACCES: a user's memcore on a login host; slurmstepd, root,
 * checks it where it writes), or -1 with why set
 * ("directory D is writable by others than root (mode 0777)", ...).
 */
int mc_dir_root_only(const char *path, char *why, size_t whylen);

/*
 * Whether st (an fstat of an opened directory) is one where root may make
 * a directory for a user: a directory owned by owner (root; the unit tests
 * pass their own uid) that no one else can write, or that is sticky (a
 * shared /scratch, mode 1777: others can make names in it but cannot
 * rename or remove what the owner put there).
 */
bool mc_st_shared_dir_ok(const struct stat *st, uid_t owner);

/*
 * The load-time rule of a directory root makes and removes users'
 * directories in (LocalScratch=): an absolute path whose every symbolic
 * link is root's, the directory (resolved) and every one above it root's
 * and writable by no one else unless sticky (a 1777 /scratch, under a
 * 1777 /tmp: others cannot rename or remove what root put there), that
 * is mc_st_shared_dir_ok all the way down. One not there yet passes when
 * only root could make it (mc_dir_root_only's rule; the prolog checks it
 * again when it opens it). A trailing slash is ignored. Returns 0 safe,
 * or -1 with why ("directory /x is owned by uid 1001, not root: ...",
 * "/x/s is a symbolic link of uid 1001, not root's: ...", "directory /x/s
 * is writable by others than root (mode 0777): ...").
 */
int mc_dir_shared_root(const char *path, char *why, size_t whylen);

/*
 * Whether st (an fstat of an opened file) is a regular file of root's
 * with none of the mode bits deny set (022: only root may write it; 077:
 * only root may open it) and one link (no second name another user could
 * have made to it): a file root writes, locks or believes in a directory
 * of root's.
 */
bool mc_st_root_only(const struct stat *st, unsigned deny);

/* The highest uid of a system account (Debian's SYS_UID_MAX, login.defs):
 * daemons' own accounts such as prometheus, never a person's. */
#define MC_SYSTEM_UID_MAX 999

/*
 * Open the directory dir (an absolute path) for root to write files in,
 * as mc_dir_root_only judged it at load: from "/" down, one component at
 * a time (openat), a symbolic link followed only when root owns it (a
 * link of anyone else's, swapped in since, is refused: ELOOP), and the
 * directory opened must be owned by root and writable by no one else
 * (EPERM otherwise: its owner could plant or replace what root writes).
 * Returns the descriptor (O_DIRECTORY, O_CLOEXEC), or -1 with errno.
 */
int mc_open_root_dir(const char *dir);

/*
 * Read (out false) or write (out true) exactly len bytes at fd,
 * retrying after EINTR and short transfers. Returns 0, or -1 (errno set;
 * an early end of file reads as -1 with errno 0, a write that wrote
 * nothing as -1 with EIO). No allocation, no stdio: the sampler thread
 * writes the live gauges with it.
 */
int mc_io_all(int fd, void *buf, size_t len, bool out);

/* mc_io_all's write of len bytes of buf, which it does not change. */
static inline int mc_write_all(int fd, const void *buf, size_t len)
{
	return mc_io_all(fd, (void *)buf, len, true);
}

/*
 * Read fd from where it stands until end of file, or until len - 1 bytes
 * (the rest of a longer file is left unread), into buf, NUL-terminated;
 * len must be at least 1. Retries after EINTR and short reads. Unlike
 * mc_io_all, an early end of file is no error: the length read is
 * returned (0 for an empty file), or -1 with errno set, buf's contents
 * then undefined. fd stays open. No allocation, no stdio: the sampler
 * thread reads cgroup files with it (through mc_read_at).
 */
ssize_t mc_read_fd(int fd, char *buf, size_t len);

/*
 * Read a small file, `name` relative to the directory fd dfd (AT_FDCWD for
 * a path), into buf (NUL-terminated, at most len - 1 bytes). The last
 * component must not be a symlink (O_NOFOLLOW): cgroup and /proc files
 * never are. Returns the length, or -1 with errno set.
 */
ssize_t mc_read_at(int dfd, const char *name, char *buf, size_t len);

/*
 * A directory stream over the directory dfd is open on, from its first
 * entry, for readdir; dfd stays open and its own (closedir closes only
 * the stream's descriptor). Returns the stream, or NULL with errno set.
 */
DIR *mc_opendir_fd(int dfd);


/*
 * An invariant that must hold where it stands (Slurm's xassert): checked
 * in the test builds (-DMC_DEBUG: make sanitize, make integration-asan),
 * where a broken one aborts with "memcore: invariant broken: EXPR at
 * FILE:LINE (FUNCTION)"; compiled out of the plugin slurmd loads, which
 * must never bring a slurmd or slurmstepd down.
 */
#ifdef MC_DEBUG
#define mc_assert(expr)							\
	((expr) ? (void)0							\
		: mc_assert_failed(#expr, __FILE__, __LINE__, __func__))
#else
#define mc_assert(expr) ((void)0)
#endif
void mc_assert_failed(const char *expr, const char *file, int line,
		      const char *func) __attribute__((noreturn));

#endif
