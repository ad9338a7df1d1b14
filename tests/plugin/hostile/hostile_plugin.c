/* Plugins written to escape gscheck's containment, one way each (selected at compile time with
 * HOSTILE_<MODE>; tests/plugin/hostile/hostile_test.py says what gscheck must make of each).
 * Each is a correct tf.gather (tf-gpu) of a float32 or int32 vector by int32 or int64 indices
 * until a case's params[0] is the trigger 13: then it misbehaves. The INIT_DAEMON,
 * FINALIZE_DAEMON and REPORT_REWRITE modes misbehave outside run(), once per worker.
 *
 * What a plugin managed (a write that went through, a syscall that was refused) is appended to
 * files in $GSC_HOSTILE_DIR, so the test can tell a refused attempt from an undetected one. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gscheck/plugin.h"
#include "hostile_wire.h"

#define TRIGGER 13
/* Helpers shared by some modes only. */
#define SHARED __attribute__((unused))
/* A daemon nobody kills still ends by itself: the test then sees it alive, not forever. */
#define LINGER_NS (30ll * 1000000000)

static int64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static void nap_ms(int ms) {
  const struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&t, NULL);
}

/* Appends a line to $GSC_HOSTILE_DIR/NAME. */
static void note(const char* name, const char* fmt, ...) {
  const char* dir = getenv("GSC_HOSTILE_DIR");
  if (!dir) return;
  char path[4096], line[1024];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  if (n >= (int)sizeof line) n = (int)sizeof line - 1;
  const int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return;
  (void)!write(fd, line, (size_t)n);
  close(fd);
}

/* The value of `key` in /proc/self/status ("" when absent). */
static void status_field(const char* key, char* out, size_t n) {
  out[0] = 0;
  FILE* f = fopen("/proc/self/status", "r");
  if (!f) return;
  char line[512];
  const size_t k = strlen(key);
  while (fgets(line, sizeof line, f))
    if (!strncmp(line, key, k) && line[k] == ':') {
      char* v = line + k + 1;
      while (*v == ' ' || *v == '\t') ++v;
      v[strcspn(v, "\n")] = 0;
      snprintf(out, n, "%s", v);
      break;
    }
  fclose(f);
}

/* The first line of `file` in this process's group of cgroup `controller` (v1) or of its only
 * group (v2), or "unreadable (why)". */
static void cgroup_value(const char* controller, const char* file, char* out, size_t n) {
  snprintf(out, n, "unreadable (no group)");
  FILE* f = fopen("/proc/self/cgroup", "r");
  if (!f) return;
  char line[1024], path[2048];
  while (fgets(line, sizeof line, f)) {
    line[strcspn(line, "\n")] = 0;
    char* a = strchr(line, ':');
    char* b = a ? strchr(a + 1, ':') : NULL;
    if (!b) continue;
    *b = 0;
    const char* ctrls = a + 1;
    int v2 = !strcmp(line, "0") && !*ctrls, match = 0;
    for (const char* c = ctrls; !v2 && *c;) { /* "cpu,cpuacct" */
      const size_t len = strcspn(c, ",");
      if (len == strlen(controller) && !strncmp(c, controller, len)) match = 1;
      c += len + (c[len] == ',');
    }
    if (!v2 && !match) continue;
    snprintf(path, sizeof path, "/sys/fs/cgroup/%s%s/%s", v2 ? "" : controller, b + 1, file);
    FILE* g = fopen(path, "r");
    if (!g) {
      const int e = errno;
      snprintf(out, n, "unreadable (%.160s: ", path); /* the path's head names the group */
      snprintf(out + strlen(out), n - strlen(out), "%s)", strerror(e));
    } else {
      if (!fgets(out, (int)n, g)) snprintf(out, n, "unreadable (empty)");
      out[strcspn(out, "\n")] = 0;
      fclose(g);
    }
    if (!v2) break;
  }
  fclose(f);
}

/* What this worker can see of its own containment, one line in $GSC_HOSTILE_DIR/protections
 * (once per process): hostile_test.py holds it against what the run's report says is on, so a
 * protection that is silently off fails every hostile test instead of passing it. */
static void note_protections(void) {
  static int done;
  if (done) return;
  done = 1;
  char seccomp[64], nnp[64], capeff[64], pids[256], mem[256], cwd[512];
  status_field("Seccomp", seccomp, sizeof seccomp);
  status_field("NoNewPrivs", nnp, sizeof nnp);
  status_field("CapEff", capeff, sizeof capeff);
  cgroup_value("pids", "pids.max", pids, sizeof pids);
  cgroup_value("memory", "memory.limit_in_bytes", mem, sizeof mem); /* v1 */
  if (!strncmp(mem, "unreadable", 10)) cgroup_value("memory", "memory.max", mem, sizeof mem);
  if (!getcwd(cwd, sizeof cwd)) snprintf(cwd, sizeof cwd, "? (%s)", strerror(errno));
  /* A file beside the notes folder: writable to the driver, read-only to a contained worker. */
  const char* dir = getenv("GSC_HOSTILE_DIR");
  char probe[4096], fs[128];
  snprintf(probe, sizeof probe, "%s/../probe-%d", dir ? dir : "/tmp", (int)getpid());
  const int fd = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd >= 0) {
    close(fd);
    unlink(probe);
    snprintf(fs, sizeof fs, "writable");
  } else {
    snprintf(fs, sizeof fs, "%s", strerror(errno));
  }
  /* the driver compares them with its own */
  char pid_ns[128] = "?", mnt_ns[128] = "?", ipc_ns[128] = "?";
  ssize_t k = readlink("/proc/self/ns/pid", pid_ns, sizeof pid_ns - 1);
  if (k > 0) pid_ns[k] = 0;
  k = readlink("/proc/self/ns/mnt", mnt_ns, sizeof mnt_ns - 1);
  if (k > 0) mnt_ns[k] = 0;
  k = readlink("/proc/self/ns/ipc", ipc_ns, sizeof ipc_ns - 1);
  if (k > 0) ipc_ns[k] = 0;
  note("protections",
       "seccomp=%s\tno_new_privs=%s\tcap_eff=%s\tpid_ns=%s\tmnt_ns=%s\tipc_ns=%s\tcwd=%s\t"
       "outside_write=%s\tpids.max=%s\tmemory.max=%s\n",
       seccomp, nnp, capeff, pid_ns, mnt_ns, ipc_ns, cwd, fs, pids, mem);
}

SHARED static size_t page_size(void) { return (size_t)sysconf(_SC_PAGESIZE); }

static int is_trigger(const gsc_call* call) {
  const gsc_tensor* p = call->params;
  if (!p || p->rank != 1 || p->dims[0] < 1) return 0;
  if (p->dtype == GSC_FLOAT32) return ((const float*)p->data)[0] == (float)TRIGGER;
  if (p->dtype == GSC_INT32) return ((const int32_t*)p->data)[0] == TRIGGER;
  return 0;
}

/* --- Daemons. */

/* No parent-death signal, then linger (bounded). */
static void linger(const char* who) {
  prctl(PR_SET_PDEATHSIG, 0);
  note("daemons", "%s %d\n", who, (int)getpid());
  for (const int64_t until = now_ns() + LINGER_NS; now_ns() < until;) nap_ms(50);
  _exit(0);
}

/* A child in its own session (out of the worker's process group). */
SHARED static void start_setsid_daemon(const char* who) {
  if (fork() == 0) {
    setsid();
    linger(who);
  }
}

/* fork, setsid, fork again: the daemon's parent exits at once, so it is nobody's child. */
SHARED static void start_double_fork_daemon(const char* who, void (*body)(const char*)) {
  const pid_t p = fork();
  if (p == 0) {
    setsid();
    if (fork() == 0) body(who);
    _exit(0);
  }
  if (p > 0) waitpid(p, NULL, 0);
}

/* gscheck's pid: the nearest ancestor named gscheck, else the worker's last argument. */
SHARED static pid_t gscheck_pid(void) {
  for (pid_t pid = getppid(); pid > 1;) {
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE* f = fopen(path, "r");
    if (!f) break;
    const size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    if (strstr(buf, "(gscheck) ")) return pid;
    const char* close = strrchr(buf, ')');
    int ppid = 0;
    if (!close || sscanf(close + 2, "%*c %d", &ppid) != 1) break;
    pid = ppid;
  }
  char args[8192];
  const int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  const ssize_t n = read(fd, args, sizeof args - 1);
  close(fd);
  if (n <= 1) return 0;
  args[n - 1] = 0;
  const char* last = memrchr(args, 0, (size_t)n - 1);
  return (pid_t)atoi(last ? last + 1 : args);
}

#if defined(HOSTILE_REPORT_REWRITE)
static char g_report[4096];
static pid_t g_gscheck;

/* gscheck's --report argument as an absolute path (read from /proc), else $GSC_HOSTILE_REPORT. */
static void find_report(void) {
  g_gscheck = gscheck_pid();
  char path[64], args[65536];
  snprintf(path, sizeof path, "/proc/%d/cmdline", (int)g_gscheck);
  const int fd = g_gscheck > 0 ? open(path, O_RDONLY | O_CLOEXEC) : -1;
  const ssize_t n = fd >= 0 ? read(fd, args, sizeof args - 1) : -1;
  if (fd >= 0) close(fd);
  for (ssize_t at = 0; n > 0 && at < n; at += (ssize_t)strlen(args + at) + 1) {
    args[n] = 0;
    const char* value = NULL;
    if (!strcmp(args + at, "--report") && at + (ssize_t)strlen(args + at) + 1 < n)
      value = args + at + strlen(args + at) + 1;
    else if (!strncmp(args + at, "--report=", 9))
      value = args + at + 9;
    if (!value) continue;
    char cwd[4096] = "";
    snprintf(path, sizeof path, "/proc/%d/cwd", (int)g_gscheck);
    const ssize_t c = readlink(path, cwd, sizeof cwd - 1);
    cwd[c > 0 ? c : 0] = 0;
    snprintf(g_report, sizeof g_report, "%s%s%s", value[0] == '/' ? "" : cwd,
             value[0] == '/' ? "" : "/", value);
    return;
  }
  const char* env = getenv("GSC_HOSTILE_REPORT");
  if (env) snprintf(g_report, sizeof g_report, "%s", env);
}

static char* skip_spaces(char* p) {
  while (*p == ' ' || *p == '\n') ++p;
  return p;
}

/* In place, same length: every FAILED verdict PASSED, every FAILED count 0. */
static void forge_report(char* text) {
  for (char* p = text; (p = strstr(p, "\"verdict\""));) {
    p = skip_spaces(p + 9);
    if (*p != ':') continue;
    p = skip_spaces(p + 1);
    if (!strncmp(p, "\"FAILED\"", 8)) memcpy(p + 1, "PASSED", 6);
  }
  for (char* p = text; (p = strstr(p, "\"FAILED\""));) {
    p = skip_spaces(p + 8);
    if (*p != ':') continue;
    p = skip_spaces(p + 1);
    if (*p < '0' || *p > '9') continue;
    *p++ = '0';
    while (*p >= '0' && *p <= '9') *p++ = ' ';
  }
}

/* Waits for gscheck to exit, then rewrites its report (atomically, as gscheck does). */
static void rewrite_after_exit(const char* who) {
  prctl(PR_SET_PDEATHSIG, 0);
  note("daemons", "%s %d report=%s gscheck=%d\n", who, (int)getpid(), g_report, (int)g_gscheck);
  const int64_t until = now_ns() + LINGER_NS;
  while (now_ns() < until && g_gscheck > 0 && !(kill(g_gscheck, 0) != 0 && errno == ESRCH))
    nap_ms(20);
  if (now_ns() >= until || !g_report[0]) _exit(0);
  FILE* f = fopen(g_report, "rb");
  if (!f) _exit(0);
  static char text[16 << 20];
  const size_t n = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  text[n] = 0;
  forge_report(text);
  char tmp[4200];
  snprintf(tmp, sizeof tmp, "%s.hostile", g_report);
  const char* how = "renamed";
  FILE* out = fopen(tmp, "wb");
  if (!out || fwrite(text, 1, n, out) != n || fclose(out) != 0 || rename(tmp, g_report) != 0) {
    how = "in place";
    out = fopen(g_report, "r+b");
    if (!out || fwrite(text, 1, n, out) != n || fclose(out) != 0) how = NULL;
  }
  if (how)
    note("acted", "rewrote %s (%s)\n", g_report, how);
  else
    note("refused", "report rewrite: %s\n", strerror(errno));
  _exit(0);
}
#endif

/* --- Forged frames on the result pipe. */

#if defined(HOSTILE_FORGED_HUGE) || defined(HOSTILE_DESYNC)
static void send_result(int32_t code, int has_output, uint64_t bytes, const char* message) {
  struct {
    hw_frame_header h;
    hw_result r;
    int64_t dim;
    char text[64];
  } f;
  memset(&f, 0, sizeof f);
  const uint32_t dims = has_output ? 8 : 0;
  const uint32_t text = (uint32_t)strlen(message);
  f.h = (hw_frame_header){HW_MAGIC, HW_RESULT, (uint32_t)sizeof f.r + dims + text, 0};
  f.r.code = code;
  f.r.has_output = has_output;
  f.r.dtype = GSC_FLOAT32;
  f.r.rank = has_output ? 1 : 0;
  f.r.payload_offset = (uint64_t)page_size();
  f.r.payload_bytes = bytes;
  f.r.message_size = text;
  f.dim = (int64_t)(bytes / 4);
  char buf[sizeof f];
  memcpy(buf, &f, sizeof f.h + sizeof f.r);
  size_t at = sizeof f.h + sizeof f.r;
  memcpy(buf + at, &f.dim, dims);
  memcpy(buf + at + dims, message, text);
  (void)!write(HW_REPLY_FD, buf, at + dims + text);
}
#endif

#if defined(HOSTILE_FORGED_HUGE)
/* An output of 256 MiB (256 times --max-bytes 1 MiB), in an out memfd grown to hold it. */
static void forge_huge(void) {
  const uint64_t claim = 256ull << 20;
  if (ftruncate(HW_OUT_MEM_FD, (off_t)(claim + 2 * page_size())) != 0)
    note("refused", "ftruncate out memfd: %s\n", strerror(errno));
  send_result(GSC_OK, 1, claim, "");
}
#endif

#if defined(HOSTILE_FORGED_ALLOCATED)
/* "Allocated 16 TiB": a host that believes it waits 262144 s more. */
static void forge_allocated(const gsc_call* call) {
  struct {
    hw_frame_header h;
    uint64_t bytes;
  } f = {{HW_MAGIC, HW_ALLOCATED, 8, 0}, 1ull << 44};
  for (int i = 0; i < 4; ++i) (void)!write(HW_REPLY_FD, &f, sizeof f);
  /* Past the call's own deadline, then a right answer: only the deadline can fail it. */
  int64_t until = call->deadline_ns + 4000000000ll;
  if (until > now_ns() + 20000000000ll) until = now_ns() + 20000000000ll;
  while (now_ns() < until) nap_ms(20);
}
#endif

/* --- Writes to the inputs: through the plugin's own view of them, or the memfd behind it. */

#if defined(HOSTILE_INPUT_PWRITE) || defined(HOSTILE_INPUT_MMAP)
/* The file offset of address p in its mapping and a descriptor of that file; -1 if none. */
static int file_of(const void* p, off_t* offset) {
  FILE* maps = fopen("/proc/self/maps", "r");
  if (!maps) return -1;
  char line[4096];
  unsigned long lo, hi, off, inode = 0;
  int found = 0;
  while (!found && fgets(line, sizeof line, maps)) {
    if (sscanf(line, "%lx-%lx %*s %lx %*s %lu", &lo, &hi, &off, &inode) == 4 &&
        lo <= (uintptr_t)p && (uintptr_t)p < hi)
      found = 1;
  }
  fclose(maps);
  if (!found || inode == 0) return -1;
  *offset = (off_t)(off + ((uintptr_t)p - lo));
  DIR* d = opendir("/proc/self/fd");
  int fd = -1;
  for (struct dirent* e; d && fd < 0 && (e = readdir(d));) {
    struct stat st;
    const int n = atoi(e->d_name);
    if (e->d_name[0] != '.' && n != dirfd(d) && fstat(n, &st) == 0 && st.st_ino == inode) fd = n;
  }
  if (d) closedir(d);
  return fd;
}
#endif

/* Tries to change params[0] (the mode says how); notes what happened. Returns whether it did. */
SHARED static int write_inputs(const gsc_call* call) {
  volatile uint32_t* first = (volatile uint32_t*)call->params->data;
  const uint32_t before = *first, junk = before ^ 0x40404040u;
  const char* attempts = "";
  (void)junk;
#if defined(HOSTILE_INPUT_MPROTECT)
  const size_t page = page_size();
  void* at = (void*)((uintptr_t)first / page * page);
  if (mprotect(at, page, PROT_READ | PROT_WRITE) != 0)
    note("refused", "mprotect inputs: %s\n", strerror(errno));
  attempts = "mprotect";
  *first = junk; /* refused: this faults, as the ABI says a write to the inputs does */
#elif defined(HOSTILE_INPUT_PWRITE) || defined(HOSTILE_INPUT_MMAP)
  off_t off = 0;
  const int fd = file_of((const void*)first, &off);
  if (fd < 0) {
    note("refused", "no descriptor of the input memory\n");
    return 0;
  }
  char reopened[64];
  snprintf(reopened, sizeof reopened, "/proc/self/fd/%d", fd);
  const int fds[2] = {fd, open(reopened, O_RDWR | O_CLOEXEC)};
  if (fds[1] < 0) note("refused", "reopen input memfd O_RDWR: %s\n", strerror(errno));
  for (int i = 0; i < 2 && *first == before; ++i) {
    if (fds[i] < 0) continue;
#if defined(HOSTILE_INPUT_PWRITE)
    attempts = "pwrite";
    if (pwrite(fds[i], &junk, sizeof junk, off) != (ssize_t)sizeof junk)
      note("refused", "pwrite input memfd (fd %d): %s\n", fds[i], strerror(errno));
#else
    attempts = "mmap";
    const size_t page = page_size();
    const off_t map_at = off / (off_t)page * (off_t)page;
    unsigned char* m = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, fds[i], map_at);
    if (m == MAP_FAILED) {
      note("refused", "mmap input memfd writable (fd %d): %s\n", fds[i], strerror(errno));
    } else {
      memcpy(m + (off - map_at), &junk, sizeof junk);
      munmap(m, page);
    }
#endif
  }
  if (fds[1] >= 0) close(fds[1]);
#endif
  const int changed = *first != before;
  note(changed ? "acted" : "refused", "%s: the inputs %s\n", attempts,
       changed ? "changed" : "did not change");
  return changed;
}

/* --- Other misbehaviours. */

#if defined(HOSTILE_GUARD_MPROTECT) || defined(HOSTILE_OVERRUN_PAST_GUARD)
/* The guard page after an output of `bytes` at out: the first page boundary 256 guard bytes on. */
static unsigned char* tail_guard_page(void* out, size_t bytes) {
  const size_t page = page_size();
  const uintptr_t end = (uintptr_t)out + bytes + 256;
  return (unsigned char*)((end + page - 1) / page * page);
}
#endif

#if defined(HOSTILE_MEMFD_FILL)
/* 1.5 GiB into a memfd of its own: past 4 x --max-bytes + 1 GiB, which --max-bytes 1 MiB gives. */
static void fill_memfd(void) {
  static char chunk[1 << 20];
  memset(chunk, 0x5a, sizeof chunk);
  const int fd = memfd_create("hostile-fill", MFD_CLOEXEC);
  if (fd < 0) {
    note("refused", "memfd_create: %s\n", strerror(errno));
    return;
  }
  int mib = 0;
  for (; mib < 1536; ++mib)
    if (write(fd, chunk, sizeof chunk) != (ssize_t)sizeof chunk) break;
  note(mib == 1536 ? "acted" : "refused", "memfd fill reached %d MiB (%s)\n", mib,
       mib == 1536 ? "all of it" : strerror(errno));
  close(fd);
}
#endif

#if defined(HOSTILE_SYSCALLS)
/* What no kernel library needs: each should be refused. */
static void forbidden_syscalls(void) {
  const pid_t target = gscheck_pid() > 0 ? gscheck_pid() : getppid();
  if (ptrace(PTRACE_ATTACH, target, NULL, NULL) == 0) {
    note("acted", "ptrace attached to %d\n", (int)target);
    int st;
    waitpid(target, &st, __WALL);
    ptrace(PTRACE_DETACH, target, NULL, NULL);
    kill(target, SIGCONT); /* whatever stop the attach left */
  } else {
    note("refused", "ptrace %d: %s\n", (int)target, strerror(errno));
  }
  const char* dir = getenv("GSC_HOSTILE_DIR");
  char mnt[4096];
  snprintf(mnt, sizeof mnt, "%s/mnt", dir ? dir : "/tmp");
  if (mount("hostile", mnt, "tmpfs", 0, "size=1m") == 0) {
    note("acted", "mounted tmpfs on %s\n", mnt);
    umount2(mnt, MNT_DETACH);
  } else {
    note("refused", "mount: %s\n", strerror(errno));
  }
  const int ns = open("/proc/1/ns/mnt", O_RDONLY | O_CLOEXEC);
  if (ns >= 0 && setns(ns, CLONE_NEWNS) == 0)
    note("acted", "setns into /proc/1/ns/mnt\n");
  else
    note("refused", "setns: %s\n", strerror(errno));
  if (ns >= 0) close(ns);
  /* io_uring (file operations no filter sees), userfaultfd, perf events: refused. */
  const struct {
    const char* name;
    long nr;
  } more[] = {{"io_uring_setup", SYS_io_uring_setup},
              {"userfaultfd", SYS_userfaultfd},
              {"perf_event_open", SYS_perf_event_open}};
  for (size_t i = 0; i < sizeof more / sizeof more[0]; ++i) {
    char params[512] = {0}; /* big enough for io_uring_params and perf_event_attr */
    const long fd = more[i].nr == SYS_io_uring_setup    ? syscall(more[i].nr, 4, params)
                    : more[i].nr == SYS_perf_event_open ? syscall(more[i].nr, params, 0, -1, -1, 0)
                                                        : syscall(more[i].nr, 0);
    if (fd >= 0) {
      note("acted", "%s gave descriptor %ld\n", more[i].name, fd);
      close((int)fd);
    } else {
      note("refused", "%s: %s\n", more[i].name, strerror(errno));
    }
  }
}
#endif

#if defined(HOSTILE_ESCAPE_WRITES)
/* Tries to write one file through `path`; notes the outcome. */
static void try_write(const char* what, const char* path, const char* text) {
  const int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOCTTY, 0644);
  if (fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text))
    note("acted", "wrote %s (%s)\n", what, path);
  else
    note("refused", "write %s (%s): %s\n", what, path, strerror(errno));
  if (fd >= 0) close(fd);
}

/* Every writable place a root worker used to have outside its own: gscheck's working directory
 * (relative paths), /tmp, the worker's own build folder (swap the worker for the next run's),
 * the report's folder, sysctls (core_pattern runs a program as root outside every namespace),
 * its cgroup's limits, the terminal, a device node. Only its private /dev/shm may work. */
static void escape_writes(void) {
  char self[4096] = {0}, path[4200];
  try_write("gscheck's working directory", "hostile-cwd-file", "x");
  try_write("/tmp", "/tmp/gscheck-hostile-escape", "x");
  if (readlink("/proc/self/exe", self, sizeof self - 1) > 0) {
    try_write("the worker executable", self, "#!/bin/sh\n");
    *strrchr(self, '/') = 0;
    snprintf(path, sizeof path, "%s/hostile-build-file", self);
    try_write("the build folder", path, "x");
  }
  const char* report = getenv("GSC_HOSTILE_REPORT");
  if (report) {
    snprintf(path, sizeof path, "%s.tmp.forged", report);
    try_write("the report's folder", path, "{}");
    try_write("the report", report, "{}");
  }
  try_write("kernel.hostname", "/proc/sys/kernel/hostname", "hostile\n");
  try_write("kernel.core_pattern", "/proc/sys/kernel/core_pattern", "|/bin/true\n");
  try_write("its cgroup's memory limit", "/sys/fs/cgroup/memory/memory.limit_in_bytes", "-1\n");
  try_write("the root cgroup", "/sys/fs/cgroup/cgroup.procs", "0\n");
  const int tty = open("/dev/tty", O_WRONLY | O_CLOEXEC);
  if (tty >= 0 && write(tty, "20 cases: 20 PASSED\n", 20) == 20)
    note("acted", "wrote to /dev/tty\n");
  else
    note("refused", "/dev/tty: %s\n", strerror(errno));
  if (tty >= 0) close(tty);
  if (mknod("/dev/shm/hostile-null", S_IFCHR | 0666, makedev(1, 3)) == 0)
    note("acted", "made a device node\n");
  else
    note("refused", "mknod: %s\n", strerror(errno));
  /* Its one writable place, which must die with the run. */
  const int shm = open("/dev/shm/gscheck-hostile-left", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (shm < 0 || write(shm, "left", 4) != 4) note("refused", "its /dev/shm: %s\n", strerror(errno));
  if (shm >= 0) close(shm);
}
#endif

#if defined(HOSTILE_ROOT_REACH)
/* What the caller's uid 0 reaches without a single capability, on a read-only root: a
 * root-only unix socket (connect() writes no file, so a read-only mount does not stop it: a
 * container runtime's socket is the host), an abstract one, a device node (a read-only mount
 * does not stop device writes either: a raw disk), a root-only SysV shared memory segment.
 * The driver set up a harmless one of each and names them in the environment. */
static void connect_unix(const char* what, const char* name, int abstract) {
  struct sockaddr_un a;
  memset(&a, 0, sizeof a);
  a.sun_family = AF_UNIX;
  const size_t n = strlen(name);
  if (n + 2 > sizeof a.sun_path) return;
  memcpy(a.sun_path + abstract, name, n);
  const socklen_t len =
      (socklen_t)(offsetof(struct sockaddr_un, sun_path) + abstract + n + (abstract ? 0 : 1));
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd >= 0 && connect(fd, (const struct sockaddr*)&a, len) == 0)
    note("acted", "connected to %s\n", what);
  else
    note("refused", "%s: %s\n", what, strerror(errno));
  if (fd >= 0) close(fd);
}

static void root_reach(void) {
  const char* sock = getenv("GSC_HOSTILE_SOCKET");
  const char* abstract = getenv("GSC_HOSTILE_ABSTRACT");
  const char* device = getenv("GSC_HOSTILE_DEVICE");
  const char* shm = getenv("GSC_HOSTILE_SHMID");
  if (sock) connect_unix("a root-only unix socket", sock, 0);
  if (abstract) connect_unix("an abstract unix socket", abstract, 1);
  if (device) {
    const int fd = open(device, O_WRONLY | O_CLOEXEC);
    if (fd >= 0)
      note("acted", "opened a device node for writing\n");
    else
      note("refused", "device node: %s\n", strerror(errno));
    if (fd >= 0) close(fd);
  }
  if (shm) {
    void* p = shmat(atoi(shm), NULL, SHM_RDONLY);
    if (p != (void*)-1) {
      note("acted", "attached a root-only SysV shared memory segment\n");
      shmdt(p);
    } else {
      note("refused", "SysV shared memory: %s\n", strerror(errno));
    }
  }
}
#endif

#if defined(HOSTILE_READ_CASES)
/* Result replay: the case files (expect blocks), saved cases and the report, read through
 * gscheck's working directory, the test folder and /proc/<gscheck>/cwd. */
static void read_cases(void) {
  const char* dir = getenv("GSC_HOSTILE_DIR");
  char path[4200];
  const char* tries[4] = {"cases/a_clean.json", "../cases/a_clean.json", NULL, NULL};
  char via_dir[4200], via_proc[4200];
  snprintf(via_dir, sizeof via_dir, "%s/../cases/a_clean.json", dir ? dir : "/tmp");
  snprintf(via_proc, sizeof via_proc, "/proc/%d/cwd/cases/a_clean.json", (int)gscheck_pid());
  tries[2] = via_dir;
  tries[3] = via_proc;
  for (int i = 0; i < 4; ++i) {
    snprintf(path, sizeof path, "%s", tries[i]);
    char buf[64];
    const int fd = open(path, O_RDONLY | O_CLOEXEC);
    const ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf) : -1;
    if (n > 0)
      note("acted", "read %zd bytes of %s\n", n, path);
    else
      note("refused", "read %s: %s\n", path, n == 0 ? "empty" : strerror(errno));
    if (fd >= 0) close(fd);
  }
}
#endif

#if defined(HOSTILE_FORGE_STATUS)
/* The guard's status pipe to gscheck (descriptor 7 of the namespace's init): a forged "exited
 * with status 0" written first, then a crash. */
static void forge_status(void) {
  const int fd = open("/proc/1/fd/7", O_WRONLY | O_CLOEXEC);
  const int zero = 0;
  if (fd >= 0 && write(fd, &zero, sizeof zero) == (ssize_t)sizeof zero)
    note("acted", "wrote a status of 0 to the guard's pipe\n");
  else
    note("refused", "/proc/1/fd/7: %s\n", strerror(errno));
  if (fd >= 0) close(fd);
  raise(SIGSEGV);
}
#endif

static void before_output(const gsc_call* call) {
  (void)call;
#if defined(HOSTILE_SETSID_DAEMON)
  start_setsid_daemon("run-setsid");
#elif defined(HOSTILE_DOUBLE_FORK)
  start_double_fork_daemon("run-double-fork", linger);
#elif defined(HOSTILE_DESYNC)
  send_result(GSC_INVALID_ARGUMENT, 0, 0, "forged"); /* then the real result: two for one call */
#elif defined(HOSTILE_MEMFD_FILL)
  fill_memfd();
#elif defined(HOSTILE_KILL_PARENT)
  if (kill(getppid(), SIGKILL) != 0)
    note("refused", "kill parent: %s\n", strerror(errno));
  else
    note("acted", "killed parent %d\n", (int)getppid());
#elif defined(HOSTILE_KILL_GSCHECK)
  const pid_t g = gscheck_pid();
  if (g <= 0 || kill(g, SIGKILL) != 0)
    note("refused", "kill gscheck %d: %s\n", (int)g, strerror(errno));
  else
    note("acted", "killed gscheck %d\n", (int)g);
#elif defined(HOSTILE_CLOSE_FDS)
  close_range(0, ~0u, 0);
#elif defined(HOSTILE_ABORT)
  abort();
#elif defined(HOSTILE_SYSCALLS)
  forbidden_syscalls();
#elif defined(HOSTILE_ESCAPE_WRITES)
  escape_writes();
#elif defined(HOSTILE_READ_CASES)
  read_cases();
#elif defined(HOSTILE_ROOT_REACH)
  root_reach();
#elif defined(HOSTILE_FORGE_STATUS)
  forge_status();
#endif
}

static void after_output(const gsc_call* call, void* out, size_t bytes) {
  (void)call;
  (void)out;
  (void)bytes;
#if defined(HOSTILE_FORGED_HUGE)
  forge_huge();
#elif defined(HOSTILE_FORGED_ALLOCATED)
  forge_allocated(call);
#elif defined(HOSTILE_GUARD_MPROTECT)
  unsigned char* guard = tail_guard_page(out, bytes);
  if (mprotect(guard, page_size(), PROT_READ | PROT_WRITE) != 0)
    note("refused", "mprotect guard page: %s\n", strerror(errno));
  memset(guard, 0x11, 64); /* refused: this faults in the guard page */
#elif defined(HOSTILE_OVERRUN_PAST_GUARD)
  /* One byte a page past the guard page: a stride bug, not a memset running off the end. */
  tail_guard_page(out, bytes)[page_size() + 64] = 0x11;
#elif defined(HOSTILE_REPORT_REWRITE)
  ((unsigned char*)out)[0] ^= 1; /* a wrong answer: the report the daemon rewrites says FAILED */
#elif defined(HOSTILE_INIT_REWRITE_CASES)
  ((unsigned char*)out)[0] ^= 1; /* a wrong answer, on case files init() made clean ones */
#endif
}

/* --- The gather itself. */

static int64_t index_at(const gsc_tensor* t, int64_t i) {
  return t->dtype == GSC_INT32 ? ((const int32_t*)t->data)[i] : ((const int64_t*)t->data)[i];
}

static int32_t decline(gsc_result* result, const char* why) {
  snprintf(result->message, sizeof result->message, "%s", why);
  return GSC_UNIMPLEMENTED;
}

static int32_t run(const gsc_call* call, gsc_result* result) {
  note_protections();
  const gsc_tensor* params = call->params;
  const gsc_tensor* indices = call->indices;
  if (call->op != GSC_GATHER || call->batch_dims != 0 || params->rank != 1 || indices->rank != 1)
    return decline(result, "only a vector gather without batch_dims");
  if (call->axis && (call->axis->rank != 0 || index_at(call->axis, 0) != 0))
    return decline(result, "only axis 0");
  const int64_t n = indices->dims[0], size = params->dims[0];
  /* Elements are 4 bytes (float32, int32): copied as bits, from a copy taken before anything
   * the plugin does to its inputs. */
  uint32_t* in = malloc((size_t)(size > 0 ? size : 1) * 4);
  if (!in) return GSC_RESOURCE_EXHAUSTED;
  if (size > 0) memcpy(in, params->data, (size_t)size * 4);
  const int trigger = is_trigger(call);
#if defined(HOSTILE_NON_UTF8_MESSAGE)
  if (trigger) { /* bytes no UTF-8 text holds, and a lone lead byte at the end */
    free(in);
    snprintf(result->message, sizeof result->message, "bad index \xff\xfe\xed\xa0\x80 \xc3");
    return GSC_INVALID_ARGUMENT;
  }
#endif
#if defined(HOSTILE_BUDGET_LIE)
  if (trigger) { /* "out of memory" on a few-byte case, to be skipped instead of failed */
    free(in);
    snprintf(result->message, sizeof result->message, "out of device memory");
    return GSC_RESOURCE_EXHAUSTED;
  }
#endif
  if (trigger) {
    before_output(call);
#if defined(HOSTILE_INPUT_MPROTECT) || defined(HOSTILE_INPUT_PWRITE) || defined(HOSTILE_INPUT_MMAP)
    write_inputs(call);
#endif
  }
  uint32_t* out = call->alloc_output(call->alloc_ctx, params->dtype, 1, &n);
  if (!out) {
    free(in);
    return GSC_RESOURCE_EXHAUSTED;
  }
  for (int64_t i = 0; i < n; ++i) {
    const int64_t k = index_at(indices, i);
    out[i] = k >= 0 && k < size ? in[k] : 0; /* tf-gpu: a bad index gives zero */
  }
  free(in);
  if (trigger) after_output(call, out, (size_t)n * 4);
  return GSC_OK;
}

/* --- Life cycle. */

#if defined(HOSTILE_INIT_DAEMON) || defined(HOSTILE_REPORT_REWRITE)
static int32_t init(gsc_result* result) {
  (void)result;
#if defined(HOSTILE_INIT_DAEMON)
  start_double_fork_daemon("init", linger);
#else
  /* One rewriter for the run, started by the first worker. */
  const char* dir = getenv("GSC_HOSTILE_DIR");
  char lock[4096];
  snprintf(lock, sizeof lock, "%s/rewriter", dir ? dir : "/tmp");
  const int fd = open(lock, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd >= 0) {
    close(fd);
    find_report();
    start_double_fork_daemon("rewriter", rewrite_after_exit);
  }
#endif
  return GSC_OK;
}
#endif

#if defined(HOSTILE_INIT_REWRITE_CASES)
/* Before any case is checked: a clean case's text over each triggered case file, so a grader
 * that reads the files after loading the plugin grades the wrong answers on clean cases. */
static int32_t init(gsc_result* result) {
  (void)result;
  const char* dir = getenv("GSC_HOSTILE_DIR");
  char path[4096], text[65536];
  snprintf(path, sizeof path, "%s/../cases/a_clean.json", dir ? dir : "/tmp");
  FILE* f = fopen(path, "rb");
  const size_t n = f ? fread(text, 1, sizeof text, f) : 0;
  if (f) fclose(f);
  for (const char* const* name = (const char* const[]){"b_trigger", "e_trigger", NULL}; *name;
       ++name) {
    snprintf(path, sizeof path, "%s/../cases/%s.json", dir ? dir : "/tmp", *name);
    FILE* out = n ? fopen(path, "wb") : NULL;
    if (!out && n) { /* a read-only mount: the working directory (gscheck's, the case folder
                        here) may still be on the writable mount below it */
      snprintf(path, sizeof path, "%s.json", *name);
      out = fopen(path, "wb");
    }
    if (out && fwrite(text, 1, n, out) == n)
      note("acted", "rewrote %s\n", path);
    else
      note("refused", "rewrite %s: %s\n", path, strerror(errno));
    if (out) fclose(out);
  }
  return GSC_OK;
}
#endif

#if defined(HOSTILE_FINALIZE_DAEMON)
static void finalize(void) { start_double_fork_daemon("finalize", linger); }
#endif

const gsc_plugin_v2* gscheck_plugin_v2(void) {
  static const gsc_plugin_v2 plugin = {
    .abi_version = GSCHECK_PLUGIN_ABI_V2,
    .name = "hostile",
    .ops = 1u << GSC_GATHER,
    .dtypes = (1ull << GSC_FLOAT32) | (1ull << GSC_INT32),
    .index_dtypes = (1u << GSC_INT32) | (1u << GSC_INT64),
    .semantics = 1u << GSC_TF_GPU,
    .deterministic = 1,
    .run = run,
#if defined(HOSTILE_INIT_DAEMON) || defined(HOSTILE_REPORT_REWRITE) || \
    defined(HOSTILE_INIT_REWRITE_CASES)
    .init = init,
#endif
#if defined(HOSTILE_FINALIZE_DAEMON)
    .finalize = finalize,
#endif
  };
  return &plugin;
}
