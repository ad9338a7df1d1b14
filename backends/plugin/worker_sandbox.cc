#include "backends/plugin/worker_sandbox.h"

#include <sched.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <initializer_list>

#ifdef GSCHECK_HAVE_SECCOMP
#include <seccomp.h>
#include <sys/socket.h>
#endif

namespace gscheck::worker {

#ifdef GSCHECK_HAVE_SECCOMP
namespace {

// Denied outright: each reaches another process, the mounts, the kernel or the machine.
constexpr int kDenied[] = {
    SCMP_SYS(ptrace),
    SCMP_SYS(process_vm_readv),
    SCMP_SYS(process_vm_writev),
    SCMP_SYS(kcmp),
    SCMP_SYS(pidfd_getfd),
    SCMP_SYS(mount),
    SCMP_SYS(umount2),
    SCMP_SYS(pivot_root),
    SCMP_SYS(chroot),
    SCMP_SYS(move_mount),
    SCMP_SYS(open_tree),
    SCMP_SYS(fsopen),
    SCMP_SYS(fsmount),
    SCMP_SYS(fsconfig),
    SCMP_SYS(mount_setattr),
    SCMP_SYS(setns),
    SCMP_SYS(unshare),
    SCMP_SYS(init_module),
    SCMP_SYS(finit_module),
    SCMP_SYS(delete_module),
    SCMP_SYS(kexec_load),
    SCMP_SYS(kexec_file_load),
    SCMP_SYS(reboot),
    SCMP_SYS(swapon),
    SCMP_SYS(swapoff),
    SCMP_SYS(acct),
    SCMP_SYS(settimeofday),
    SCMP_SYS(clock_settime),
    SCMP_SYS(clock_adjtime),
    SCMP_SYS(adjtimex),
    SCMP_SYS(sethostname),
    SCMP_SYS(setdomainname),
    SCMP_SYS(iopl),
    SCMP_SYS(ioperm),
    SCMP_SYS(open_by_handle_at),
    SCMP_SYS(quotactl),
    SCMP_SYS(bpf),
    SCMP_SYS(keyctl),
    SCMP_SYS(add_key),
    SCMP_SYS(request_key),
    SCMP_SYS(lookup_dcookie),
    SCMP_SYS(syslog),
    // Kernel surface no gather needs and sandboxes commonly close (Chrome, Docker's default
    // profile): io_uring runs file and network operations no filter sees, userfaultfd stalls
    // kernel paths at will, perf events read other processes' activity.
    SCMP_SYS(io_uring_setup),
    SCMP_SYS(io_uring_enter),
    SCMP_SYS(io_uring_register),
    SCMP_SYS(userfaultfd),
    SCMP_SYS(perf_event_open),
};

// Namespace flags a clone() may not ask for (a new namespace is a way around this one's).
constexpr unsigned long kNamespaceFlags[] = {CLONE_NEWNS,    CLONE_NEWPID, CLONE_NEWUSER,
                                             CLONE_NEWNET,   CLONE_NEWUTS, CLONE_NEWIPC,
                                             CLONE_NEWCGROUP};

}  // namespace

bool deny_system_calls() {
  ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
  scmp_filter_ctx ctx = ::seccomp_init(SCMP_ACT_ALLOW);
  if (!ctx) return false;
  bool ok = true;
  for (int sc : kDenied)
    if (sc >= 0) ok = ok && ::seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), sc, 0) == 0;
  // One rule per flag: rules of one call are alternatives, and a rule compares one masked value.
  for (unsigned long flag : kNamespaceFlags)
    ok = ok && ::seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
                                  SCMP_A0(SCMP_CMP_MASKED_EQ, flag, flag)) == 0;
  // No unix socket of its own: connect() writes no file, so a read-only root does not stop it,
  // and a root worker (no capability needed) would reach every root-only socket on the
  // machine, a container runtime's among them, and the host's abstract ones. socketpair()
  // stays: a connected pair reaches nothing outside the worker.
  ok = ok && ::seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(socket), 1,
                                SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffffffu, AF_UNIX)) == 0;
  // clone3's flags sit behind a pointer no filter can read: ENOSYS makes glibc use clone().
  ok = ok && ::seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0) == 0;
  ok = ok && ::seccomp_load(ctx) == 0;
  ::seccomp_release(ctx);
  return ok;
}
bool deny_signals_to_parent(pid_t gscheck) {
  scmp_filter_ctx ctx = ::seccomp_init(SCMP_ACT_ALLOW);
  if (!ctx) return false;
  // pid_t is 32 bits; the register's upper half is not defined.
  auto pid_is = [](pid_t p) {
    return SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffffffu, static_cast<uint32_t>(p));
  };
  const pid_t parent = ::getppid();
  bool ok = true;
  for (pid_t target : {parent, pid_t{0}, pid_t{-1}, static_cast<pid_t>(-parent), gscheck,
                       static_cast<pid_t>(-gscheck)})
    ok = ok &&
         ::seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(kill), 1, pid_is(target)) == 0;
  for (int sc : {SCMP_SYS(tkill), SCMP_SYS(tgkill)})
    for (pid_t target : {parent, gscheck})
      ok = ok && ::seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), sc, 1, pid_is(target)) == 0;
  ok = ok && ::seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(pidfd_send_signal), 0) == 0;
  ok = ok && ::seccomp_load(ctx) == 0;
  ::seccomp_release(ctx);
  return ok;
}
#else
bool deny_system_calls() { return false; }
bool deny_signals_to_parent(pid_t) { return false; }
#endif

}  // namespace gscheck::worker
