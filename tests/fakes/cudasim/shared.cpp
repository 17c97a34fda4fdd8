// cudasim's block-shared memory checks (see shared.h): the objects, found once in the module's
// symbol table; per host thread, a shadow record per 2-byte unit of the TLS image (bf16 is the
// smallest type the kernels store, so two lanes writing neighbouring halves of a word are not a
// race, as on a GPU); and the __tsan_* entry points the instrumented kernels call.
#include "shared.h"

#include <cxxabi.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

namespace {

const uint16_t kPoison = 0x7fa5; // sNaN as bf16; two of them, sNaN as fp32
const size_t kSharedLimit = 48 * 1024;

struct object {
    size_t off, size; // in the TLS image
    std::string name; // demangled: kernel(args)::name
};

// What every host thread shares: the module's TLS image and which of its bytes are __shared__.
struct image {
    bool ok = false;
    bool over_limit = false; // a kernel over 48 KiB: the module would not build, every launch fails
    size_t tls_size = 0;
    std::vector<object> objects;
    std::vector<int32_t> unit_object; // per 2-byte unit of the image: an index into objects, or -1
} img;
std::once_flag img_once;

// The ELF file of the object (executable or module) whose code contains ADDR.
struct module_info {
    uintptr_t addr;
    std::string path;
    size_t tls_size;
    void *tls_data; // this thread's block
    bool found;
};

int find_module(struct dl_phdr_info *info, size_t, void *p)
{
    module_info &m = *static_cast<module_info *>(p);
    bool mine = false;
    size_t tls = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) &ph = info->dlpi_phdr[i];
        if (ph.p_type == PT_LOAD && m.addr >= info->dlpi_addr + ph.p_vaddr &&
            m.addr < info->dlpi_addr + ph.p_vaddr + ph.p_memsz)
            mine = true;
        if (ph.p_type == PT_TLS) tls = ph.p_memsz;
    }
    if (!mine) return 0;
    m.found = true, m.tls_size = tls, m.tls_data = info->dlpi_tls_data;
    m.path = info->dlpi_name && info->dlpi_name[0] ? info->dlpi_name : "/proc/self/exe";
    return 1;
}

module_info this_module()
{
    module_info m{(uintptr_t)&find_module, "", 0, nullptr, false};
    dl_iterate_phdr(find_module, &m);
    return m;
}

// The __shared__ objects: the TLS symbols that are function-local statics (_ZZ...), not their
// guard variables (_ZGV...) and not the runtime's own thread-locals.
void read_symbols(const std::string &path)
{
    const int fd = open(path.c_str(), O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st)) {
        if (fd >= 0) close(fd);
        return;
    }
    void *map = mmap(nullptr, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED) return;
    const char *base = static_cast<const char *>(map);
    const ElfW(Ehdr) *eh = reinterpret_cast<const ElfW(Ehdr) *>(base);
    const ElfW(Shdr) *sh = reinterpret_cast<const ElfW(Shdr) *>(base + eh->e_shoff);
    for (unsigned i = 0; i < eh->e_shnum; i++) {
        if (sh[i].sh_type != SHT_SYMTAB) continue;
        const ElfW(Sym) *sym = reinterpret_cast<const ElfW(Sym) *>(base + sh[i].sh_offset);
        const char *names = base + sh[sh[i].sh_link].sh_offset;
        for (size_t k = 0; k < sh[i].sh_size / sizeof *sym; k++) {
            const char *n = names + sym[k].st_name;
            if (ELF64_ST_TYPE(sym[k].st_info) != STT_TLS || !sym[k].st_size || strncmp(n, "_ZZ", 3)) continue;
            int status = 0;
            char *d = abi::__cxa_demangle(n, nullptr, nullptr, &status);
            img.objects.push_back({(size_t)sym[k].st_value, (size_t)sym[k].st_size, status == 0 && d ? d : n});
            free(d);
        }
    }
    munmap(map, (size_t)st.st_size);
}

// kernel(args)::name -> kernel(args): the function a __shared__ object belongs to
std::string owner(const std::string &object_name)
{
    const size_t k = object_name.rfind("::");
    return k == std::string::npos ? object_name : object_name.substr(0, k);
}

// A kernel with more than 48 KiB of static shared memory: ptxas refuses it ("uses too much shared data").
void check_static_limit()
{
    std::vector<std::pair<std::string, size_t>> sizes;
    for (const object &o : img.objects) {
        const std::string f = owner(o.name);
        size_t i = 0;
        while (i < sizes.size() && sizes[i].first != f) i++;
        if (i == sizes.size()) sizes.push_back({f, 0});
        sizes[i].second += o.size;
    }
    for (const auto &s : sizes)
        if (s.second > kSharedLimit) {
            char line[512];
            snprintf(line, sizeof line,
                     "static shared memory: %s declares %zu bytes of __shared__ objects, over the 48 KiB limit",
                     s.first.c_str(), s.second);
            cudasim_report(line);
            img.over_limit = true;
        }
}

void load_image()
{
    const module_info m = this_module();
    if (!m.found || !m.tls_size) return;
    read_symbols(m.path);
    img.tls_size = m.tls_size;
    img.unit_object.assign((m.tls_size + 1) / 2, -1);
    for (size_t i = 0; i < img.objects.size(); i++) {
        const object &o = img.objects[i];
        if (o.off + o.size > m.tls_size) continue;
        for (size_t u = o.off / 2; u < (o.off + o.size + 1) / 2; u++) img.unit_object[u] = (int32_t)i;
    }
    img.ok = true;
    if (img.objects.empty()) // crossentropy's always exist: a stripped binary, nothing would be checked
        cudasim_report("shared memory: no __shared__ objects in the symbol table of the module (stripped?): unchecked");
    if (!getenv("CUDASIM_RACECHECK") || strcmp(getenv("CUDASIM_RACECHECK"), "0")) check_static_limit();
}

// The shadow of one 2-byte unit.  Epochs count barriers on this host thread (every block start and
// every __syncthreads that opens); a warp's epoch is the count of its warp-level barriers.  An
// access is ordered after an earlier one when a block barrier lies between them (a later epoch)
// or, for two lanes of one warp, a warp barrier does.
struct unit {
    uint32_t block;   // the block (serial) that last touched it: older means undefined, unordered with nothing
    uint32_t w_epoch; // the last write: epoch, the writer's warp epoch, the writer
    uint32_t w_wepoch;
    uint32_t r_epoch; // the reads since epoch r_epoch: warps that read (a mask), and of warp r_warp
    uint32_t r_warps; // at its epoch r_wepoch, the lanes that read
    uint32_t r_wepoch;
    uint32_t r_lanes;
    uint16_t w_tid, r_tid, r_warp;
};

// One host thread's block-shared memory state (each runs one block at a time).
struct thread_state {
    bool active; // a block runs on this host thread now
    char *lo;    // this thread's TLS block
    std::vector<unit> units;
    uint32_t serial, epoch, block_epoch, warp_clock;
    std::vector<uint32_t> wep; // per warp
    const char *kernel;
    cudasim_dim block;
    bool failed, quiet;
    unsigned reports;
};
thread_local thread_state ts;

// Reports: the first few in full (one per object and kind), then only counted.
void report(const char *kind, unsigned me, int other, size_t u, const char *what)
{
    ts.failed = true;
    if (ts.quiet) return;
    static std::mutex m;
    static std::vector<std::string> seen;
    static unsigned total;
    const object &o = img.objects[(size_t)img.unit_object[u]];
    std::lock_guard<std::mutex> g(m);
    const std::string key = std::string(kind) + o.name;
    for (const std::string &s : seen)
        if (s == key) return;
    seen.push_back(key);
    if (++total > 20) return;
    const std::string obj = o.name.substr(o.name.rfind("::") + 2), fn = owner(o.name);
    char line[768], other_s[32] = "";
    if (other >= 0) snprintf(other_s, sizeof other_s, " and thread %d", other);
    snprintf(line, sizeof line, "%s: %s block (%u,%u,%u): thread %u%s: %s %s byte %zu (%s)", kind, ts.kernel,
             ts.block.x, ts.block.y, ts.block.z, me, other_s, what, obj.c_str(), u * 2 - o.off, fn.c_str());
    cudasim_report(line);
}

bool ordered_after(uint32_t epoch, unsigned tid, uint32_t wepoch, unsigned me)
{
    if (epoch < ts.epoch) return true;
    return tid / 32 == me / 32 && wepoch < ts.wep[me / 32];
}

void on_write(unit &c, size_t u, unsigned me)
{
    const unsigned warp = me / 32, lane = me % 32;
    if (c.w_epoch >= ts.block_epoch && c.w_tid != me && !ordered_after(c.w_epoch, c.w_tid, c.w_wepoch, me))
        report("racecheck: shared-memory race (write after write)", me, c.w_tid, u,
               "writes what the other wrote, no barrier between:");
    else if (c.r_epoch == ts.epoch) {
        const bool other_warp = c.r_warps & ~(1u << warp);
        const bool other_lane = c.r_warp == warp && c.r_wepoch == ts.wep[warp] && (c.r_lanes & ~(1u << lane));
        if (other_warp || other_lane)
            report("racecheck: shared-memory race (write after read)", me, c.r_tid != me ? (int)c.r_tid : -1, u,
                   "writes what another thread read, no barrier between:");
    }
    c.w_epoch = ts.epoch, c.w_wepoch = ts.wep[warp], c.w_tid = (uint16_t)me;
}

void on_read(unit &c, size_t u, unsigned me)
{
    const unsigned warp = me / 32, lane = me % 32;
    if (c.w_epoch < ts.block_epoch)
        report("initcheck: read of undefined shared memory", me, -1, u,
               "reads, before any thread of the block wrote it,");
    else if (c.w_tid != me && !ordered_after(c.w_epoch, c.w_tid, c.w_wepoch, me))
        report("racecheck: shared-memory race (read after write)", me, c.w_tid, u,
               "reads what the other wrote, no barrier between:");
    if (c.r_epoch != ts.epoch) c.r_epoch = ts.epoch, c.r_warps = 0, c.r_lanes = 0, c.r_wepoch = 0;
    c.r_warps |= 1u << warp;
    if (c.r_warp != warp || c.r_wepoch != ts.wep[warp])
        c.r_warp = (uint16_t)warp, c.r_wepoch = ts.wep[warp], c.r_lanes = 0;
    c.r_lanes |= 1u << lane;
    c.r_tid = (uint16_t)me;
}

// Whether P lies in this thread's __shared__ objects while a block runs (the instrumented
// kernels' every other access: device memory, registers spilled to the fiber's stack).
inline bool shared_now(const void *p, size_t *off)
{
    if (!ts.active) return false;
    *off = (size_t)(static_cast<const char *>(p) - ts.lo);
    return *off < img.tls_size;
}

void check_access(const void *p, size_t n, bool write)
{
    size_t off;
    if (!n || !shared_now(p, &off)) return;
    const size_t first = off / 2, last = (off + n - 1) / 2;
    bool any = false;
    for (size_t u = first; u <= last && u < img.unit_object.size(); u++) any |= img.unit_object[u] >= 0;
    if (!any) return; // a guard variable of a local static, or the runtime's own thread-locals
    cudasim_maybe_switch();
    const unsigned me = cudasim_running_thread();
    for (size_t u = first; u <= last && u < img.unit_object.size(); u++) {
        if (img.unit_object[u] < 0) continue;
        unit &c = ts.units[u];
        if (c.block != ts.serial) { // undefined at block start: poisoned at its first touch
            memcpy(ts.lo + u * 2, &kPoison, 2);
            c.block = ts.serial, c.w_epoch = 0, c.r_epoch = 0;
        }
        if (write) on_write(c, u, me);
        else on_read(c, u, me);
    }
}

} // namespace

namespace cudasim_shared {
void thread_begin()
{
    std::call_once(img_once, load_image);
    if (!img.ok || ts.lo) return;
    ts.lo = static_cast<char *>(this_module().tls_data); // ts itself is in it: allocated by now
    ts.units.assign(img.unit_object.size(), unit{});
    const char *rc = getenv("CUDASIM_RACECHECK");
    ts.quiet = rc && !strcmp(rc, "0");
}

void block_begin(const char *kernel, cudasim_dim block, unsigned threads)
{
    if (!ts.lo) return;
    ts.active = true, ts.kernel = kernel, ts.block = block, ts.failed = false;
    ts.serial++, ts.epoch++;
    ts.block_epoch = ts.epoch;
    ts.wep.assign((threads + 31) / 32, 0);
}

void block_end() { ts.active = false; }
bool block_failed() { return (ts.failed || img.over_limit) && !ts.quiet; }
void block_barrier() { ts.epoch++; }
void warp_barrier(unsigned w) { ts.wep[w] = ++ts.warp_clock; }
} // namespace cudasim_shared

// The calls -fsanitize=thread puts before the kernels' loads and stores (and nothing else of
// ThreadSanitizer's runtime: it is not linked).
extern "C" {
#define CUDASIM_TSAN_SIZE(n)                                              \
    void __tsan_read##n(void *p) { check_access(p, n, false); }           \
    void __tsan_write##n(void *p) { check_access(p, n, true); }           \
    void __tsan_unaligned_read##n(void *p) { check_access(p, n, false); } \
    void __tsan_unaligned_write##n(void *p) { check_access(p, n, true); }
CUDASIM_TSAN_SIZE(1)
CUDASIM_TSAN_SIZE(2)
CUDASIM_TSAN_SIZE(4)
CUDASIM_TSAN_SIZE(8)
CUDASIM_TSAN_SIZE(16)
#undef CUDASIM_TSAN_SIZE
void __tsan_read_range(void *p, size_t n) { check_access(p, n, false); }
void __tsan_write_range(void *p, size_t n) { check_access(p, n, true); }
void __tsan_init() {}
void __tsan_func_entry(void *) {}
void __tsan_func_exit() {}
void __tsan_vptr_read(void **) {}
void __tsan_vptr_update(void **, void *) {}
}
