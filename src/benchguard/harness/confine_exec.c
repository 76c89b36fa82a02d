/* The Landlock launcher, native: the same job as confine_exec.py, without starting an
 * interpreter before every agent (about 20 ms of each run's time on a loaded 2-core
 * host, against about 1 ms for this program).
 *
 * Usage: confine-exec [KEY=VALUE...] -- AGENT ARGV...
 *        confine-exec --spawn CGROUP_DIR [--join=PROCS...] -- COMMAND...  (harness/containment)
 *        confine-exec --separate [OPTIONS] PARENT OWN [KEEP...] -- COMMAND...  (separate_exec.py's
 *                                                             steps, natively)
 *
 * The policy entries are those of confine_exec.py (read_exec, read, read_write,
 * files_write, devices, home.target/upper/work/copy, confine=0|1, seccomp=0|1), plus
 * one this program needs and the Python launcher does not read:
 *
 *   seccomp.program=HEX   the filter of seccomp.py (program()), as hex: the harness
 *                         builds it, so the filter has one source (seccomp.py)
 *
 * Steps, in the Python launcher's order: mount the fresh home in a mount namespace
 * of the agent's own (as a user also a user namespace mapping its own ids), restrict
 * itself with Landlock (every right of the kernel's ABI handled, signals and abstract
 * unix sockets scoped from ABI 6), give up every capability and check the kernel's
 * account of it (/proc/self/status), install the seccomp filter last, and exec the
 * agent. Anything that fails is fatal: one line on stderr, exit 125, no agent.
 *
 * Built by harness/launcher_build.py (cc -O2 -static when the C library allows it);
 * where no compiler is on the machine the harness runs confine_exec.py instead. The
 * rights table must match confine_exec.py's rights_for (tests/harness/
 * test_native_launcher.py compares what both launchers let the kernel grant).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/sysmacros.h>
#include <netinet/in.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#if !defined(__x86_64__)
#error "the launcher's syscall numbers and the seccomp filter are x86_64 only"
#endif

#define EXIT_CONFINE_FAILED 125
#define EXIT_EXEC_FAILED 127
#define PREFIX "benchguard confine:"

#define SYS_LL_CREATE 444
#define SYS_LL_ADD 445
#define SYS_LL_RESTRICT 446
#define SYS_SECCOMP_NR 317

#define EXECUTE (1ULL << 0)
#define WRITE_FILE (1ULL << 1)
#define READ_FILE (1ULL << 2)
#define READ_DIR (1ULL << 3)
#define REMOVE_DIR (1ULL << 4)
#define REMOVE_FILE (1ULL << 5)
#define MAKE_DIR (1ULL << 7)
#define MAKE_REG (1ULL << 8)
#define MAKE_SOCK (1ULL << 9)
#define MAKE_FIFO (1ULL << 10)
#define MAKE_SYM (1ULL << 12)
#define REFER (1ULL << 13)
#define TRUNCATE (1ULL << 14)
#define IOCTL_DEV (1ULL << 15)
#define ABI_1_FS ((1ULL << 13) - 1)
#define FILE_RIGHTS (EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV)

static void fail(const char *what, const char *detail)
{
    dprintf(2, "%s refusing to run the agent unconfined: %s%s%s\n", PREFIX, what,
            detail ? ": " : "", detail ? detail : "");
    _exit(EXIT_CONFINE_FAILED);
}

static void fail_errno(const char *what) { fail(what, strerror(errno)); }

enum kind { K_READ_EXEC, K_READ, K_READ_WRITE, K_FILES_WRITE, K_DEVICES, K_COUNT };
static const char *const KIND_NAMES[K_COUNT] = {"read_exec", "read", "read_write",
                                                "files_write", "devices"};

struct entry {
    enum kind kind;
    const char *path;
};

static uint64_t handled_fs(int abi)
{
    uint64_t rights = ABI_1_FS;
    if (abi >= 2) rights |= REFER;
    if (abi >= 3) rights |= TRUNCATE;
    if (abi >= 5) rights |= IOCTL_DEV;
    return rights;
}

static uint64_t rights_for(enum kind kind, int abi)
{
    const uint64_t read = READ_FILE | READ_DIR;
    const uint64_t write = WRITE_FILE | REMOVE_DIR | REMOVE_FILE | MAKE_DIR | MAKE_REG |
                           MAKE_SOCK | MAKE_FIFO | MAKE_SYM | REFER | TRUNCATE;
    uint64_t rights = 0;
    switch (kind) {
    case K_READ_EXEC: rights = read | EXECUTE; break;
    case K_READ: rights = read; break;
    case K_READ_WRITE: rights = read | EXECUTE | write; break;
    case K_FILES_WRITE: rights = WRITE_FILE | READ_FILE | TRUNCATE; break;
    case K_DEVICES: rights = READ_FILE | READ_DIR | WRITE_FILE | TRUNCATE | IOCTL_DEV; break;
    default: break;
    }
    return rights & handled_fs(abi);
}

struct ruleset_attr {
    uint64_t handled_access_fs;
    uint64_t handled_access_net;
    uint64_t scoped;
};

struct path_beneath {
    uint64_t allowed_access;
    int32_t parent_fd;
} __attribute__((packed));

static void restrict_self(const struct entry *entries, int count)
{
    long abi = syscall(SYS_LL_CREATE, NULL, (size_t)0, (uint32_t)1);
    if (abi < 1) fail("Landlock is not available in this kernel (or is disabled)", NULL);
    struct ruleset_attr attr = {handled_fs((int)abi), 0, 0};
    size_t size = 8;
    if (abi >= 6) {
        attr.scoped = 1 | 2; /* abstract unix sockets, signals */
        size = sizeof attr;
    }
    long ruleset = syscall(SYS_LL_CREATE, &attr, size, (uint32_t)0);
    if (ruleset < 0) fail_errno("landlock_create_ruleset");
    for (int i = 0; i < count; i++) {
        /* O_PATH: the rule is on what the path resolves to; no read of the object. */
        int fd = open(entries[i].path, O_PATH | O_CLOEXEC);
        if (fd < 0) continue; /* missing or out of reach: skipping only takes access away */
        struct stat info;
        if (fstat(fd, &info) != 0) fail_errno("fstat of a policy path");
        uint64_t rights = rights_for(entries[i].kind, (int)abi);
        if (!S_ISDIR(info.st_mode)) rights &= FILE_RIGHTS;
        struct path_beneath beneath = {rights, fd};
        if (syscall(SYS_LL_ADD, (int)ruleset, 1, &beneath, (uint32_t)0) != 0) {
            char what[4200];
            snprintf(what, sizeof what, "landlock_add_rule %s", entries[i].path);
            fail_errno(what);
        }
        close(fd);
    }
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) fail_errno("prctl(PR_SET_NO_NEW_PRIVS)");
    if (syscall(SYS_LL_RESTRICT, (int)ruleset, (uint32_t)0) != 0)
        fail_errno("landlock_restrict_self");
    close((int)ruleset);
}

static void write_file(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0) fail_errno(path);
    size_t len = strlen(text);
    if (write(fd, text, len) != (ssize_t)len) fail_errno(path);
    close(fd);
}

/* An overlay option value: ',' ':' and '\' escaped. */
static void escape_into(char *out, size_t room, const char *path)
{
    size_t n = 0;
    for (const char *p = path; *p; p++) {
        if (*p == '\\' || *p == ',' || *p == ':') {
            if (n + 1 >= room) fail("home path too long for the overlay options", path);
            out[n++] = '\\';
        }
        if (n + 1 >= room) fail("home path too long for the overlay options", path);
        out[n++] = *p;
    }
    out[n] = '\0';
}

/* cp -a: the copy the overlay falls back to (the kernel refuses some lower layers). */
static void copy_tree(const char *from, const char *to)
{
    pid_t child = fork();
    if (child < 0) fail_errno("fork (home copy)");
    if (child == 0) {
        execl("/bin/cp", "cp", "-a", "--", from, to, (char *)NULL);
        _exit(127);
    }
    int status = 0;
    while (waitpid(child, &status, 0) < 0)
        if (errno != EINTR) fail_errno("waitpid (home copy)");
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) fail("cp -a of the home failed", from);
}

static void mount_home(const char *target, const char *upper, const char *work,
                       const char *copy)
{
    uid_t uid = geteuid();
    gid_t gid = getegid();
    int flags = CLONE_NEWNS | (uid == 0 ? 0 : CLONE_NEWUSER);
    if (unshare(flags) != 0) fail_errno("unshare (mount namespace)");
    if (uid != 0) {
        char map[64];
        write_file("/proc/self/setgroups", "deny");
        snprintf(map, sizeof map, "%u %u 1", (unsigned)uid, (unsigned)uid);
        write_file("/proc/self/uid_map", map);
        snprintf(map, sizeof map, "%u %u 1", (unsigned)gid, (unsigned)gid);
        write_file("/proc/self/gid_map", map);
    }
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
        fail_errno("mount --make-rprivate /");
    char what[4200];
    if (copy != NULL) {
        if (mount(copy, target, NULL, MS_BIND, NULL) != 0) {
            snprintf(what, sizeof what, "bind of the home copy on %s", target);
            fail_errno(what);
        }
        return;
    }
    static char options[3 * 8192 + 64];
    char low[8192], up[8192], wk[8192];
    escape_into(low, sizeof low, target);
    escape_into(up, sizeof up, upper);
    escape_into(wk, sizeof wk, work);
    /* volatile: no sync of the upper layer when the run's namespace ends (about 10 ms
     * of every run on ext4, a journal commit). Nothing relies on it: the upper is the
     * run's scratch, read by the harness from the page cache (harness.home copies the
     * writes it keeps) and removed after; a crash loses scratch that is removed anyway.
     * A kernel without the option (before 5.10) mounts without it. */
    snprintf(options, sizeof options, "lowerdir=%s,upperdir=%s,workdir=%s,volatile", low, up, wk);
    if (mount("overlay", target, "overlay", 0, options) == 0) return;
    if (errno == EINVAL) {
        options[strlen(options) - strlen(",volatile")] = '\0';
        if (mount("overlay", target, "overlay", 0, options) == 0) return;
    }
    /* The copy fallback, with the marker harness.home reads. */
    const char *reason = strerror(errno);
    char layers[4200], copied[4300], marker[4300];
    snprintf(layers, sizeof layers, "%s", upper);
    char *slash = strrchr(layers, '/');
    if (slash == NULL || slash == layers) fail("the home's upper layer has no parent", upper);
    *slash = '\0';
    snprintf(copied, sizeof copied, "%s/copy", layers);
    snprintf(marker, sizeof marker, "%s/overlay-refused", layers);
    copy_tree(target, copied);
    int fd = open(marker, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) fail_errno(marker);
    dprintf(fd, "overlay refused (%s); the home was copied\n", reason);
    close(fd);
    if (mount(copied, target, NULL, MS_BIND, NULL) != 0) {
        snprintf(what, sizeof what, "bind of the home copy on %s", target);
        fail_errno(what);
    }
}

/* The value of one /proc/self/status field (NULL when missing); buf holds the file. */
static const char *status_field(const char *buf, const char *name, char *out, size_t room)
{
    size_t len = strlen(name);
    for (const char *line = buf; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        if (strncmp(line, name, len) == 0 && line[len] == ':') {
            const char *v = line + len + 1;
            while (*v == ' ' || *v == '\t') v++;
            size_t n = strcspn(v, "\n");
            if (n >= room) n = room - 1;
            memcpy(out, v, n);
            out[n] = '\0';
            return out;
        }
    }
    return NULL;
}

static void read_status(char *buf, size_t room)
{
    int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
    if (fd < 0) fail_errno("cannot read /proc/self/status");
    size_t n = 0;
    ssize_t got;
    while (n + 1 < room && (got = read(fd, buf + n, room - 1 - n)) > 0) n += (size_t)got;
    close(fd);
    buf[n] = '\0';
}

struct cap_header {
    uint32_t version;
    int pid;
};
struct cap_data {
    uint32_t effective, permitted, inheritable;
};

static void drop_capabilities(void)
{
    int last = 63;
    int fd = open("/proc/sys/kernel/cap_last_cap", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        char text[16] = {0};
        if (read(fd, text, sizeof text - 1) > 0) last = atoi(text);
        close(fd);
    }
    for (int cap = 0; cap <= last; cap++) {
        if (prctl(PR_CAPBSET_READ, cap, 0, 0, 0) != 1) continue;
        /* EPERM: no CAP_SETPCAP (not root: no_new_privs keeps exec from granting any);
         * EINVAL: no such capability. */
        if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EPERM && errno != EINVAL)
            fail_errno("prctl(PR_CAPBSET_DROP)");
    }
    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
    struct cap_header header = {0x20080522, 0};
    struct cap_data data[2];
    memset(data, 0, sizeof data);
    if (syscall(SYS_capset, &header, data) != 0) fail_errno("capset (clear every set)");
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) fail_errno("prctl(PR_SET_NO_NEW_PRIVS)");
    static char status[16384];
    read_status(status, sizeof status);
    const char *names[] = {"CapInh", "CapPrm", "CapEff", "CapAmb", "CapBnd"};
    int required = geteuid() == 0 ? 5 : 4;
    char value[64], left[512] = "";
    for (int i = 0; i < required; i++) {
        const char *v = status_field(status, names[i], value, sizeof value);
        if (v == NULL || strtoull(v, NULL, 16) != 0) {
            size_t n = strlen(left);
            snprintf(left + n, sizeof left - n, "%s%s %s", n ? ", " : "", names[i],
                     v ? v : "missing");
        }
    }
    const char *nnp = status_field(status, "NoNewPrivs", value, sizeof value);
    if (nnp == NULL || strcmp(nnp, "1") != 0) {
        size_t n = strlen(left);
        snprintf(left + n, sizeof left - n, "%sNoNewPrivs %s", n ? ", " : "", nnp ? nnp : "missing");
    }
    if (left[0]) fail("capabilities still held after dropping them", left);
}

struct sock_fprog_ {
    unsigned short len;
    void *filter;
};

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static void install_seccomp(const char *hex)
{
    size_t len = strlen(hex);
    if (len == 0 || len % 16 != 0 || len / 16 > 4096)
        fail("seccomp.program is not a whole number of filter instructions", NULL);
    unsigned char *code = malloc(len / 2);
    if (code == NULL) fail("out of memory", NULL);
    for (size_t i = 0; i < len / 2; i++) {
        int hi = hex_digit(hex[2 * i]), lo = hex_digit(hex[2 * i + 1]);
        if (hi < 0 || lo < 0) fail("seccomp.program is not hex", NULL);
        code[i] = (unsigned char)(hi << 4 | lo);
    }
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) fail_errno("prctl(PR_SET_NO_NEW_PRIVS)");
    struct sock_fprog_ prog = {(unsigned short)(len / 16), code};
    /* SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC */
    if (syscall(SYS_SECCOMP_NR, 1u, 1u, &prog) != 0) fail_errno("seccomp(SET_MODE_FILTER)");
    static char status[16384];
    char value[16];
    read_status(status, sizeof status);
    const char *mode = status_field(status, "Seccomp", value, sizeof value);
    if (mode == NULL || strcmp(mode, "2") != 0)
        fail("the kernel does not report seccomp mode 2 (filter)", mode ? mode : "missing");
}

struct clone_args_ {
    uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls,
        set_tid, set_tid_size, cgroup;
};
#define CLONE_INTO_CGROUP_ 0x200000000ULL
#define SYS_CLONE3_NR 435

/* --spawn CGROUP_DIR -- COMMAND...: the run's first process, created inside the run's
 * cgroup by the kernel (clone3 CLONE_INTO_CGROUP), so it is a member from its first
 * instruction with no migration (writing cgroup.procs waits for an RCU grace period);
 * both this process and the child die with their parent (PR_SET_PDEATHSIG SIGKILL).
 * This process waits and ends as the child ended (its code, or its signal). Signals
 * the harness sends the run's process group reach the child directly, so they are
 * ignored here. Where clone3 cannot do it, the old way: this process joins the
 * cgroup (cgroup.procs) and execs the command itself.
 *
 * --join=PROCS (repeatable): a cgroup v1 cgroup.procs the child also joins (writes "0")
 * before it execs anything, so every process of the run inherits it (the run's CPU
 * share and pids limit on a hybrid host: harness/cpu_share). A join that fails is
 * fatal: one line, exit 125, the command never runs outside its share. */
static void join_all(char **joins, int count)
{
    for (int i = 0; i < count; i++) {
        int fd = open(joins[i], O_WRONLY | O_CLOEXEC);
        if (fd < 0 || write(fd, "0", 1) != 1) {
            dprintf(2, "%s cannot join the run's cgroup %s: %s\n", PREFIX, joins[i],
                    strerror(errno));
            _exit(EXIT_CONFINE_FAILED);
        }
        close(fd);
    }
}

static int spawn_main(int argc, char **argv)
{
    int split = 3;
    while (split < argc && strncmp(argv[split], "--join=", 7) == 0) {
        argv[split] += 7;
        split++;
    }
    if (argc < 3 || split >= argc - 1 || strcmp(argv[split], "--") != 0) {
        dprintf(2, "usage: confine-exec --spawn CGROUP_DIR [--join=PROCS...] -- COMMAND...\n");
        return 2;
    }
    char **joins = argv + 3;
    int njoins = split - 3;
    char **command = argv + split + 1;
    pid_t parent = getppid();
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) fail_errno("prctl(PR_SET_PDEATHSIG)");
    if (getppid() != parent) _exit(EXIT_CONFINE_FAILED); /* the harness is already gone */
    int cgroup = open(argv[2], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (cgroup < 0) fail_errno("cannot open the run's cgroup");
    sigset_t group, old;
    sigemptyset(&group);
    int forwarded[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT};
    for (size_t i = 0; i < sizeof forwarded / sizeof *forwarded; i++) sigaddset(&group, forwarded[i]);
    sigprocmask(SIG_BLOCK, &group, &old);
    pid_t me = getpid();
    struct clone_args_ args;
    memset(&args, 0, sizeof args);
    args.flags = CLONE_INTO_CGROUP_;
    args.exit_signal = SIGCHLD;
    args.cgroup = (uint64_t)cgroup;
    long child = syscall(SYS_CLONE3_NR, &args, sizeof args);
    if (child < 0) {
        char procs[4200];
        snprintf(procs, sizeof procs, "%s/cgroup.procs", argv[2]);
        write_file(procs, "0");
        join_all(joins, njoins);
        close(cgroup);
        sigprocmask(SIG_SETMASK, &old, NULL);
        execvp(command[0], command);
        dprintf(2, "%s cannot run '%s': %s\n", PREFIX, command[0], strerror(errno));
        return EXIT_EXEC_FAILED;
    }
    if (child == 0) {
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != me) _exit(EXIT_CONFINE_FAILED);
        close(cgroup);
        join_all(joins, njoins);
        sigprocmask(SIG_SETMASK, &old, NULL);
        execvp(command[0], command);
        dprintf(2, "%s cannot run '%s': %s\n", PREFIX, command[0], strerror(errno));
        _exit(EXIT_EXEC_FAILED);
    }
    close(cgroup);
    for (size_t i = 0; i < sizeof forwarded / sizeof *forwarded; i++) signal(forwarded[i], SIG_IGN);
    sigprocmask(SIG_SETMASK, &old, NULL);
    int status = 0;
    while (waitpid((pid_t)child, &status, 0) < 0)
        if (errno != EINTR) fail_errno("waitpid");
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    int sig = WTERMSIG(status);
    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0); /* no core file of this process */
    signal(sig, SIG_DFL);
    sigprocmask(SIG_UNBLOCK, &group, NULL);
    kill(getpid(), sig);
    return 128 + sig;
}

/* --separate PARENT OWN [KEEP...] -- COMMAND...: the run's private view of the
 * scratch parent and of /dev/shm, the steps of separate_exec.py in its order (its
 * docstring says why each exists), without an interpreter start per run. Both must
 * give the same view (tests/harness/test_native_separation.py compares the mount
 * lists and what resolves under PARENT); a change to one is made to the other. Any
 * failure: one line, exit 125, the command never runs unseparated. */
/* The separate_exec.py these steps are the port of (its sha256): the harness runs this
 * mode only while the script is unchanged (harness/launcher_build native_separation),
 * else the script itself, so an edit there never leaves the native view behind. */
#define SEPARATE_EXEC_SHA256 "c287af5921c927c241d7e15d786e509cdb57478086905cdbeddeb665ce7c29be"
#define SEP_STAGE ".separate"
#define SEP_TMP_OPTIONS "mode=755,size=1m,nr_inodes=4096"
#define SEP_SHM_OPTIONS "mode=1777,size=64m"
#define SEP_DEV_STAGE ".separate-dev"
#define SEP_DEV_OPTIONS "mode=755,size=64k,nr_inodes=64"
#define SEP_PTS_OPTIONS "newinstance,ptmxmode=0666,mode=620"
#define SYS_MOUNT_SETATTR_NR 442
#define AT_RECURSIVE_ 0x8000
#define MOUNT_ATTR_RDONLY_ 0x1

struct sep_node {
    const char *name;
    unsigned major, minor;
};
/* The usual set (bwrap --dev's), each mode 0666. */
static const struct sep_node SEP_NODES[] = {{"null", 1, 3},    {"zero", 1, 5},
                                            {"full", 1, 7},    {"random", 1, 8},
                                            {"urandom", 1, 9}, {"tty", 5, 0}};
static const char *const SEP_LINKS[][2] = {{"fd", "/proc/self/fd"},
                                           {"stdin", "/proc/self/fd/0"},
                                           {"stdout", "/proc/self/fd/1"},
                                           {"stderr", "/proc/self/fd/2"},
                                           {"ptmx", "pts/ptmx"}};

static void sep_fail(const char *fmt, const char *a, const char *b)
{
    char what[9000];
    snprintf(what, sizeof what, fmt, a, b);
    dprintf(2, "%s cannot separate the run from the others: %s\n", PREFIX, what);
    _exit(EXIT_CONFINE_FAILED);
}

/* posixpath.abspath + normpath: lexical, no symlink resolved (as os.path.relpath). */
static char *sep_normalized(const char *path, const char *cwd)
{
    size_t room = strlen(path) + strlen(cwd) + 3;
    char *joined = malloc(room), *out = malloc(room);
    if (joined == NULL || out == NULL) sep_fail("%s%s", "out of memory", "");
    if (path[0] == '/') snprintf(joined, room, "%s", path);
    else snprintf(joined, room, "%s/%s", cwd, path);
    size_t n = 0;
    out[n++] = '/';
    for (char *part = joined; *part;) {
        char *end = strchr(part, '/');
        size_t len = end ? (size_t)(end - part) : strlen(part);
        if (len == 0 || (len == 1 && part[0] == '.')) {
            /* empty or "." */
        } else if (len == 2 && part[0] == '.' && part[1] == '.') {
            if (n > 1) {
                n--; /* the trailing '/' */
                while (n > 1 && out[n - 1] != '/') n--;
            }
        } else {
            memcpy(out + n, part, len);
            n += len;
            out[n++] = '/';
        }
        part += len;
        if (*part == '/') part++;
    }
    if (n > 1) n--; /* no trailing '/', except for "/" itself */
    out[n] = '\0';
    free(joined);
    return out;
}

static int sep_beneath(const char *path, const char *top)
{
    size_t len = strlen(top);
    while (len > 0 && top[len - 1] == '/') len--; /* top.rstrip("/") + "/" */
    return strncmp(path, top, len) == 0 && path[len] == '/';
}

static int sep_compare(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* makedirs(path, exist_ok=True), mode 0777 less the umask. */
static int sep_makedirs(char *path)
{
    for (char *p = path + 1; *p; p++) {
        if (*p != '/') continue;
        *p = '\0';
        int done = mkdir(path, 0777);
        int saved = errno;
        *p = '/';
        if (done != 0 && saved != EEXIST) {
            errno = saved;
            return -1;
        }
    }
    if (mkdir(path, 0777) != 0 && errno != EEXIST) return -1;
    struct stat info;
    if (stat(path, &info) != 0) return -1;
    if (!S_ISDIR(info.st_mode)) {
        errno = EEXIST;
        return -1;
    }
    return 0;
}

struct mount_attr_ {
    uint64_t attr_set, attr_clr, propagation, userns_fd;
};

/* The mount at path (and, recursive, every mount beneath it) read-only in this
 * namespace. */
static void sep_read_only_at(const char *path, int recursive)
{
    struct mount_attr_ attr = {MOUNT_ATTR_RDONLY_, 0, 0, 0};
    unsigned flags = recursive ? AT_RECURSIVE_ : 0;
    if (syscall(SYS_MOUNT_SETATTR_NR, AT_FDCWD, path, flags, &attr, sizeof attr) != 0)
        sep_fail("read-only %s: %s", path, strerror(errno));
}

static void sep_read_only(const char *path) { sep_read_only_at(path, 1); }

/* os.path.ismount: a mount point when its parent is on another device or is itself. */
static int sep_is_mount(const char *path)
{
    struct stat self, up;
    char parent[4200];
    if (lstat(path, &self) != 0 || S_ISLNK(self.st_mode)) return 0;
    snprintf(parent, sizeof parent, "%s/..", path);
    if (lstat(parent, &up) != 0) return 0;
    return self.st_dev != up.st_dev || self.st_ino == up.st_ino;
}

/* Step 4: a /dev of the run's own, staged at stage. */
static void sep_private_dev(const char *stage)
{
    if (mkdir(stage, 0700) != 0) sep_fail("cannot make %s: %s", stage, strerror(errno));
    if (mount("benchguard-dev", stage, "tmpfs", MS_NOSUID, SEP_DEV_OPTIONS) != 0)
        sep_fail("tmpfs for /dev: %s%s", strerror(errno), "");
    /* In a user namespace (an unprivileged harness) the kernel refuses mknod of a
     * device; the host's nodes, which the agent's uid does not own, are bound instead. */
    int fresh = geteuid() == 0;
    char node[4300], host[64];
    for (size_t i = 0; i < sizeof SEP_NODES / sizeof *SEP_NODES; i++) {
        snprintf(node, sizeof node, "%s/%s", stage, SEP_NODES[i].name);
        if (fresh) {
            if (mknod(node, S_IFCHR | 0666, makedev(SEP_NODES[i].major, SEP_NODES[i].minor)) != 0 ||
                chmod(node, 0666) != 0) /* not the umask's */
                sep_fail("cannot make /dev/%s: %s", SEP_NODES[i].name, strerror(errno));
        } else {
            int fd = open(node, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
            if (fd < 0) sep_fail("cannot make /dev/%s: %s", SEP_NODES[i].name, strerror(errno));
            close(fd);
            snprintf(host, sizeof host, "/dev/%s", SEP_NODES[i].name);
            if (mount(host, node, NULL, MS_BIND, NULL) != 0)
                sep_fail("bind of the host's /dev/%s: %s", SEP_NODES[i].name, strerror(errno));
        }
    }
    for (size_t i = 0; i < sizeof SEP_LINKS / sizeof *SEP_LINKS; i++) {
        snprintf(node, sizeof node, "%s/%s", stage, SEP_LINKS[i][0]);
        if (symlink(SEP_LINKS[i][1], node) != 0)
            sep_fail("cannot populate the private /dev: %s%s", strerror(errno), "");
    }
    char pts[4300], shm[4300];
    snprintf(pts, sizeof pts, "%s/pts", stage);
    snprintf(shm, sizeof shm, "%s/shm", stage);
    if (mkdir(pts, 0755) != 0 || mkdir(shm, 01777) != 0)
        sep_fail("cannot populate the private /dev: %s%s", strerror(errno), "");
    /* Read-only before pts and shm are mounted on it: the nodes still read and write,
     * but chmod, chown and utime are EROFS, a bound host node's included. */
    sep_read_only(stage);
    if (mount("devpts", pts, "devpts", MS_NOSUID | MS_NOEXEC, SEP_PTS_OPTIONS) != 0)
        sep_fail("new devpts instance on /dev/pts: %s%s", strerror(errno), "");
    if (mount("benchguard-shm", shm, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, SEP_SHM_OPTIONS) != 0)
        sep_fail("tmpfs on /dev/shm: %s%s", strerror(errno), "");
    if (mount(stage, "/dev", NULL, MS_MOVE, NULL) != 0)
        sep_fail("move of the private /dev: %s%s", strerror(errno), "");
}

/* Step 6: a network namespace of this process's own, loopback up. */
static void sep_private_network(void)
{
    if (unshare(CLONE_NEWNET) != 0) sep_fail("network namespace: %s%s", strerror(errno), "");
    int sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (sock < 0) sep_fail("loopback up: socket: %s%s", strerror(errno), "");
    struct ifreq request;
    memset(&request, 0, sizeof request);
    snprintf(request.ifr_name, sizeof request.ifr_name, "lo");
    if (ioctl(sock, SIOCGIFFLAGS, &request) != 0)
        sep_fail("loopback up in the run's network namespace: %s%s", strerror(errno), "");
    request.ifr_flags |= IFF_UP;
    if (ioctl(sock, SIOCSIFFLAGS, &request) != 0)
        sep_fail("loopback up in the run's network namespace: %s%s", strerror(errno), "");
    close(sock);
}

/* outermost(): paths sorted, duplicates once, none beneath another kept one; the
 * count kept (paths is sorted in place, kept has room for count). */
static int sep_outermost(char **paths, int count, char **kept)
{
    qsort(paths, (size_t)count, sizeof *paths, sep_compare);
    int nkept = 0;
    for (int i = 0; i < count; i++) {
        if (i > 0 && strcmp(paths[i], paths[i - 1]) == 0) continue;
        int inside = 0;
        for (int k = 0; k < nkept && !inside; k++)
            inside = strcmp(paths[i], kept[k]) == 0 || sep_beneath(paths[i], kept[k]);
        if (!inside) kept[nkept++] = paths[i];
    }
    return nkept;
}

static void sep_bind(const char *path, const char *target, int recursive_fallback)
{
    /* Not recursive for the run's own scratch: the staging mount lies inside it. */
    int done = mount(path, target, NULL, MS_BIND, NULL);
    if (done != 0 && errno == EINVAL && recursive_fallback)
        /* A tree holding mounts locked by a user namespace binds only recursively. */
        done = mount(path, target, NULL, MS_BIND | MS_REC, NULL);
    if (done != 0) sep_fail("bind of %s: %s", path, strerror(errno));
}

/* _bind_beneath(): path bound at its place relative to parent in the staging tmpfs;
 * the target (malloc'd), or NULL when path is not beneath parent. */
static char *sep_bind_beneath(const char *stage, const char *parent, const char *here,
                              const char *own, const char *path)
{
    /* os.path.relpath(path, parent): skipped when it is PARENT or not beneath it */
    char *normal = sep_normalized(path, here);
    size_t plen = strlen(parent);
    const char *relative;
    if (strcmp(normal, parent) == 0) relative = ".";
    else if (strcmp(parent, "/") == 0) relative = normal + 1;
    else if (strncmp(normal, parent, plen) == 0 && normal[plen] == '/') relative = normal + plen + 1;
    else relative = "..";
    if (strncmp(relative, "..", 2) == 0 || strcmp(relative, ".") == 0) {
        free(normal);
        return NULL;
    }
    size_t troom = strlen(stage) + strlen(relative) + 2;
    char *target = malloc(troom);
    if (target == NULL) sep_fail("%s%s", "out of memory", "");
    snprintf(target, troom, "%s/%s", stage, relative);
    struct stat info;
    if (stat(path, &info) == 0 && S_ISDIR(info.st_mode)) {
        if (sep_makedirs(target) != 0) sep_fail("cannot make %s: %s", target, strerror(errno));
    } else {
        char *slash = strrchr(target, '/');
        *slash = '\0';
        int made = sep_makedirs(target);
        *slash = '/';
        if (made != 0) {
            *slash = '\0';
            sep_fail("cannot make %s: %s", target, strerror(errno));
        }
        int fd = open(target, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0666);
        if (fd < 0) sep_fail("cannot make %s: %s", target, strerror(errno));
        close(fd);
    }
    sep_bind(path, target, strcmp(path, own) != 0);
    free(normal);
    return target;
}

/* Directories the run reads that some systems mount on their own (step 6). */
static const char *const SEP_SYSTEM_MOUNTS[] = {"/usr",   "/bin",    "/sbin", "/lib", "/lib32",
                                                "/lib64", "/libx32", "/etc",  "/opt"};

/* Step 6: each writable path outside the run's binds a mount of its own, then the
 * system directories that are mounts and the root mount read-only, each alone. */
static void sep_read_only_root(const char *parent, const char *own, char **writable, int count)
{
    char **kept = calloc((size_t)count + 1, sizeof *kept);
    if (kept == NULL) sep_fail("%s%s", "out of memory", "");
    int nkept = sep_outermost(writable, count, kept);
    for (int k = 0; k < nkept; k++) {
        const char *path = kept[k];
        if (strcmp(path, own) == 0 || sep_beneath(path, own) || sep_beneath(path, parent))
            continue; /* on the run's own scratch, or bound writable in step 2 */
        sep_bind(path, path, 1);
    }
    free(kept);
    for (size_t i = 0; i < sizeof SEP_SYSTEM_MOUNTS / sizeof *SEP_SYSTEM_MOUNTS; i++)
        if (sep_is_mount(SEP_SYSTEM_MOUNTS[i])) sep_read_only_at(SEP_SYSTEM_MOUNTS[i], 0);
    sep_read_only_at("/", 0);
}

static int separate_main(int argc, char **argv)
{
    /* The options come first, in any order (as separate_exec.py's). */
    int net = 0, nwritable = 0;
    char **writable = calloc((size_t)argc + 1, sizeof *writable);
    if (writable == NULL) sep_fail("%s%s", "out of memory", "");
    while (argc > 2 && (strcmp(argv[2], "--net") == 0 ||
                        strncmp(argv[2], "--writable=", strlen("--writable=")) == 0)) {
        if (strcmp(argv[2], "--net") == 0) net = 1;
        else writable[nwritable++] = argv[2] + strlen("--writable=");
        argv++;
        argc--;
    }
    int split = -1;
    for (int i = 2; i < argc; i++)
        if (strcmp(argv[i], "--") == 0) {
            split = i;
            break;
        }
    if (split < 4 || split == argc - 1) {
        dprintf(2, "usage: confine-exec --separate [--net] [--writable=PATH...] PARENT OWN "
                   "[KEEP...] -- COMMAND...\n");
        return 2;
    }
    const char *parent_arg = argv[2], *own_arg = argv[3];
    static char here[8192];
    if (getcwd(here, sizeof here) == NULL) sep_fail("getcwd: %s%s", strerror(errno), "");
    char *parent = sep_normalized(parent_arg, here);
    /* 1. the staging tmpfs inside the run's own scratch */
    size_t room = strlen(own_arg) + sizeof SEP_STAGE + 2;
    char *stage = malloc(room);
    if (stage == NULL) sep_fail("%s%s", "out of memory", "");
    snprintf(stage, room, "%s/%s", own_arg, SEP_STAGE);
    if (mkdir(stage, 0700) != 0) sep_fail("cannot make %s: %s", stage, strerror(errno));
    if (mount("benchguard-tmp", stage, "tmpfs", MS_NOSUID | MS_NODEV, SEP_TMP_OPTIONS) != 0)
        sep_fail("tmpfs on %s: %s", stage, strerror(errno));
    /* 2. OWN and each KEEP, outermost only (sorted, duplicates once), bound into it;
     * a KEEP read-only (with every mount beneath it), then each writable path beneath
     * PARENT and outside OWN bound from the host's tree over it, writable */
    int count = split - 3;
    char **paths = calloc((size_t)count, sizeof *paths);
    char **kept = calloc((size_t)count, sizeof *kept);
    if (paths == NULL || kept == NULL) sep_fail("%s%s", "out of memory", "");
    for (int i = 0; i < count; i++) paths[i] = argv[3 + i];
    int nkept = sep_outermost(paths, count, kept);
    for (int k = 0; k < nkept; k++) {
        char *target = sep_bind_beneath(stage, parent, here, own_arg, kept[k]);
        if (target != NULL && strcmp(kept[k], own_arg) != 0) sep_read_only(target);
        free(target);
    }
    char **outer = calloc((size_t)nwritable + 1, sizeof *outer);
    if (outer == NULL) sep_fail("%s%s", "out of memory", "");
    int nouter = sep_outermost(writable, nwritable, outer);
    for (int k = 0; k < nouter; k++) {
        const char *path = outer[k];
        if (strcmp(path, own_arg) != 0 && !sep_beneath(path, own_arg) && sep_beneath(path, parent_arg))
            free(sep_bind_beneath(stage, parent, here, own_arg, path));
    }
    free(outer);
    /* 3. the staging tmpfs becomes PARENT */
    if (mount(stage, parent_arg, NULL, MS_MOVE, NULL) != 0)
        sep_fail("move of the private %s: %s", parent_arg, strerror(errno));
    /* 4. a /dev of the run's own (fresh nodes, its own devpts and /dev/shm) */
    size_t droom = strlen(own_arg) + sizeof SEP_DEV_STAGE + 2;
    char *dev_stage = malloc(droom);
    if (dev_stage == NULL) sep_fail("%s%s", "out of memory", "");
    snprintf(dev_stage, droom, "%s/%s", own_arg, SEP_DEV_STAGE);
    sep_private_dev(dev_stage);
    /* 5. /sys and every mount beneath it read-only */
    if (sep_is_mount("/sys")) sep_read_only("/sys");
    /* 6. the root mount read-only, after each writable path is a mount of its own */
    sep_read_only_root(parent_arg, own_arg, writable, nwritable);
    /* 7. a network namespace of the run's own, when asked */
    if (net) sep_private_network();
    /* 8. no ambient capability across exec (none there as root: harmless) */
    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
    /* The old working directory is the covered tree's: re-enter it by name. */
    if (chdir(here) != 0) sep_fail("cannot return to %s: %s", here, strerror(errno));
    execvp(argv[split + 1], argv + split + 1);
    dprintf(2, "%s cannot run '%s': %s\n", PREFIX, argv[split + 1], strerror(errno));
    return EXIT_CONFINE_FAILED;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--spawn") == 0) return spawn_main(argc, argv);
    if (argc > 1 && strcmp(argv[1], "--separate") == 0) return separate_main(argc, argv);
    int split = -1;
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--") == 0) {
            split = i;
            break;
        }
    if (split < 0 || split == argc - 1) {
        dprintf(2, "usage: confine-exec [KEY=VALUE...] -- AGENT ARGV...\n");
        return 2;
    }
    struct entry *entries = calloc((size_t)split, sizeof *entries);
    if (entries == NULL) fail("out of memory", NULL);
    int count = 0, confine = 1, seccomp = 1;
    const char *target = NULL, *upper = NULL, *work = NULL, *copy = NULL, *program = NULL;
    rlim_t fsize = 0;
    int has_fsize = 0;
    for (int i = 1; i < split; i++) {
        char *eq = strchr(argv[i], '=');
        if (eq == NULL) fail("policy entry without '='", argv[i]);
        size_t klen = (size_t)(eq - argv[i]);
        const char *value = eq + 1;
        int known = 0;
        for (int k = 0; k < K_COUNT; k++)
            if (strlen(KIND_NAMES[k]) == klen && strncmp(argv[i], KIND_NAMES[k], klen) == 0) {
                entries[count].kind = (enum kind)k;
                entries[count].path = value;
                count++;
                known = 1;
            }
        if (known) continue;
#define KEY(name) (klen == strlen(name) && strncmp(argv[i], name, klen) == 0)
        if (KEY("home.target")) target = value;
        else if (KEY("home.upper")) upper = value;
        else if (KEY("home.work")) work = value;
        else if (KEY("home.copy")) copy = value;
        else if (KEY("seccomp.program")) program = value;
        else if (KEY("fsize") && value[0] >= '0' && value[0] <= '9') {
            char *end = NULL;
            errno = 0;
            unsigned long long bytes = strtoull(value, &end, 10);
            if (errno != 0 || end == NULL || *end != '\0') fail("bad fsize entry", value);
            fsize = (rlim_t)bytes;
            has_fsize = 1;
        }
        else if ((KEY("confine") || KEY("seccomp")) && (!strcmp(value, "0") || !strcmp(value, "1"))) {
            if (KEY("confine")) confine = value[0] == '1';
            else seccomp = value[0] == '1';
        } else {
            *eq = '\0';
            fail("unknown policy entry", argv[i]);
        }
#undef KEY
    }
    if (seccomp && program == NULL) fail("seccomp=1 needs seccomp.program", NULL);
    if (target != NULL || upper != NULL || work != NULL || copy != NULL) {
        if (target == NULL) fail("home entries without home.target", NULL);
        if (copy == NULL && (upper == NULL || work == NULL))
            fail("home.target needs home.copy, or home.upper and home.work", NULL);
        mount_home(target, upper, work, copy);
    }
    if (confine) restrict_self(entries, count);
    drop_capabilities();
    if (has_fsize) {
        /* The run's disk budget per file (harness/disk_budget.py): soft and hard, after
         * the capability drop, so the agent cannot raise it; inherited by all it starts. */
        struct rlimit limit = {fsize, fsize};
        if (setrlimit(RLIMIT_FSIZE, &limit) != 0) fail_errno("setrlimit RLIMIT_FSIZE");
    }
    if (seccomp) install_seccomp(program); /* last: just before exec */
    execvp(argv[split + 1], argv + split + 1);
    dprintf(2, "%s cannot run '%s': %s\n", PREFIX, argv[split + 1], strerror(errno));
    return EXIT_EXEC_FAILED;
}
