/* cuda/cudnn_sdpa: cuDNN's fused attention through cudnn-frontend's graph API (see cudnn_sdpa.h).
 * The one C++ translation unit of the module: every frontend call and exception stays in here,
 * and the C side sees four functions and a reason string.  The frontend is used in its
 * dynamic-loading mode (NV_CUDNN_FRONTEND_USE_DYNAMIC_LOADING): it reaches cuDNN through
 * cudnn_frontend::cudnn_dlhandle, which cudnn_sdpa_load() sets, and the CUDA runtime through
 * CUDNN_FRONTEND_CUDART_LIB_NAME, which we point at the runtime this module itself was linked
 * with (two runtimes on one machine, a PyTorch venv's and the toolkit's, must not be mixed). */
#define INSTBENCH_CUDNN_SDPA_IMPL 1
#include "cuda/cudnn_sdpa.h"

#include <dlfcn.h>
#include <link.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <glob.h>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include <cudnn_frontend.h>

namespace cudnn_frontend {
void *cudnn_dlhandle = nullptr; /* the frontend's dynamic-loading handle (declared extern there) */
}

namespace fe = cudnn_frontend;

namespace {

void say(char *why, size_t n, const char *fmt, ...)
{
    if (!why || !n) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, n, fmt, ap);
    va_end(ap);
}

/* ---- loading ---- */

std::once_flag load_once;
cudnn_sdpa_lib loaded;
char load_why[512];

/* The path of the object holding address p ("" if the loader cannot say). */
std::string object_of(const void *p)
{
    Dl_info info;
    if (dladdr(p, &info) && info.dli_fname) return info.dli_fname;
    return "";
}

void *try_open(const char *path, std::string &tried)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        if (!tried.empty()) tried += "; ";
        tried += e ? e : path;
    }
    return h;
}

/* One libcudnn.so.9 found: its version asked of the library itself (a file name can lie). */
struct candidate {
    std::string path;
    size_t version;
};

/* The folders the search looks in (see cudnn_sdpa.h), each a glob; ROOT prefixes the fixed ones. */
std::vector<std::string> search_patterns(const std::string &root)
{
    std::vector<std::string> all;
    const char *lib = "/libcudnn.so.9";
    if (const char *ch = getenv("CUDA_HOME"); ch && *ch)
        all.push_back(std::string(ch) + "/lib64" + lib), all.push_back(std::string(ch) + "/lib" + lib);
    /* the toolkits: the Deep Learning AMIs keep cuDNN inside each /usr/local/cuda-12.x/lib */
    static const char *fixed[] = {
        "/usr/local/cuda/lib64",
        "/usr/local/cuda/lib",
        "/usr/local/cuda-*/lib64",
        "/usr/local/cuda-*/lib",
        "/usr/local/cuda-*/targets/*-linux/lib",
        /* the distribution's (Debian's and Ubuntu's nvidia-cudnn, NVIDIA's libcudnn9 packages) */
        "/usr/lib/x86_64-linux-gnu",
        "/usr/lib/aarch64-linux-gnu",
        "/usr/lib64",
        "/usr/lib",
        /* pip's nvidia-cudnn-cu12/-cu13 wheels (what PyTorch installs) */
        "/opt/*/.venv/lib/python3*/site-packages/nvidia/cudnn/lib",
        "/opt/*/lib/python3*/site-packages/nvidia/cudnn/lib",
        "/usr/local/lib/python3*/dist-packages/nvidia/cudnn/lib",
        "/usr/local/lib/python3*/site-packages/nvidia/cudnn/lib",
        "/usr/lib/python3/dist-packages/nvidia/cudnn/lib",
        "/opt/conda/lib/python3*/site-packages/nvidia/cudnn/lib",
        "/opt/conda/envs/*/lib/python3*/site-packages/nvidia/cudnn/lib",
    };
    for (const char *f : fixed) all.push_back(root + f + lib);
    /* beside the CUDA runtime this module runs on (a toolkit's lib64, a wheel's nvidia/cu13/lib) */
    std::string rt = object_of(reinterpret_cast<const void *>(&cudaGetDevice));
    if (const size_t slash = rt.rfind('/'); slash != std::string::npos) {
        rt.resize(slash);
        all.push_back(rt + lib);
        all.push_back(rt + "/../../cudnn/lib" + lib); /* site-packages/nvidia/cuda_runtime/lib's sibling */
    }
    if (const char *venv = getenv("VIRTUAL_ENV"); venv && *venv)
        all.push_back(std::string(venv) + "/lib/python3*/site-packages/nvidia/cudnn/lib" + lib);
    if (const char *home = getenv("HOME"); home && *home)
        all.push_back(std::string(home) + "/.local/lib/python3*/site-packages/nvidia/cudnn/lib" + lib);
    return all;
}

using version_fn = size_t (*)(void);

/* The path the loader mapped for handle H ("" if it cannot say). */
std::string mapped_path(void *h)
{
    struct link_map *lm = nullptr;
    std::string path = dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name ? lm->l_name : "";
    if (path.empty())
        if (void *ver = dlsym(h, "cudnnGetVersion")) path = object_of(ver);
    return path;
}

/* cudnnGetVersion() of the library at PATH, opened and closed again; 0 when it cannot be loaded
 * or is not cuDNN 9 (the reason appended to TRIED). */
size_t version_of(const std::string &path, std::string &tried)
{
    void *h = try_open(path.c_str(), tried);
    if (!h) return 0;
    auto ver = reinterpret_cast<version_fn>(dlsym(h, "cudnnGetVersion"));
    const size_t v = ver ? ver() : 0;
    dlclose(h);
    if (v >= 90000 && v <= 999999) return v;
    if (!tried.empty()) tried += "; ";
    tried += path + (ver ? ": cuDNN " + std::to_string(v) + ", not 9" : ": no cudnnGetVersion");
    return 0;
}

/* The version a toolkit's file name gives (libcudnn.so.9 -> libcudnn.so.9.19.0: 91900), or 0
 * where it gives none (a wheel's plain libcudnn.so.9). */
size_t version_of_name(const std::string &real)
{
    const size_t slash = real.rfind('/');
    const std::string name = slash == std::string::npos ? real : real.substr(slash + 1);
    unsigned major = 0, minor = 0, patch = 0;
    int end = 0;
    if (sscanf(name.c_str(), "libcudnn.so.%u.%u.%u%n", &major, &minor, &patch, &end) == 3 &&
        (size_t)end == name.size() && major == 9 && minor < 100 && patch < 100)
        return major * 10000 + minor * 100 + patch;
    return 0;
}

/* Every cuDNN 9 the search finds, once each (by the file it resolves to): ranked by the version
 * its real file's name says, else by asking the library (opened, asked, closed: a probe that
 * loads none of cuDNN's sub-libraries), so that only the one chosen stays loaded. */
std::vector<candidate> find_candidates(std::string &tried)
{
    std::vector<candidate> found;
    std::vector<std::string> seen;
    auto consider = [&](const std::string &path) {
        char real[4096];
        const std::string id = realpath(path.c_str(), real) ? real : path;
        for (const std::string &s : seen)
            if (s == id) return;
        seen.push_back(id);
        if (const size_t v = version_of_name(id)) found.push_back({path, v});
        else if (const size_t w = version_of(path, tried)) found.push_back({path, w});
    };
    const char *root_env = getenv("INSTBENCH_CUDNN_SEARCH_ROOT");
    const std::string root = root_env && *root_env ? root_env : "";
    if (root.empty()) { /* the loader's own pick: LD_LIBRARY_PATH, its cache, the default folders */
        if (void *h = try_open("libcudnn.so.9", tried)) {
            const std::string path = mapped_path(h);
            dlclose(h);
            if (!path.empty()) consider(path);
        }
    }
    for (const std::string &pat : search_patterns(root)) {
        glob_t g;
        if (glob(pat.c_str(), 0, nullptr, &g) == 0)
            for (size_t i = 0; i < g.gl_pathc; i++) consider(g.gl_pathv[i]);
        globfree(&g);
    }
    return found;
}

void load_cudnn()
{
    std::string tried;
    void *h = nullptr;
    const char *forced = getenv("INSTBENCH_CUDNN_LIBRARY");
    int candidates = 1;
    if (forced && *forced) {
        h = try_open(forced, tried);
        if (!h) {
            say(load_why, sizeof load_why, "INSTBENCH_CUDNN_LIBRARY=%s cannot be loaded (%s)", forced, tried.c_str());
            return;
        }
    } else {
        std::vector<candidate> found = find_candidates(tried);
        const candidate *best = nullptr;
        for (const candidate &c : found) /* the newest; among equals the first found */
            if (!best || c.version > best->version) best = &c;
        if (best) h = try_open(best->path.c_str(), tried);
        candidates = (int)found.size();
        if (!h) {
            say(load_why, sizeof load_why,
                "no cuDNN 9 (libcudnn.so.9) on the loader's path, in a CUDA toolkit (CUDA_HOME, /usr/local/cuda*) "
                "or in a Python install's site-packages/nvidia/cudnn (set INSTBENCH_CUDNN_LIBRARY to one)%s%s",
                tried.empty() ? "" : ": ", tried.c_str());
            return;
        }
    }
    auto ver = reinterpret_cast<version_fn>(dlsym(h, "cudnnGetVersion"));
    if (!ver) {
        say(load_why, sizeof load_why, "the cuDNN library loaded has no cudnnGetVersion");
        dlclose(h);
        return;
    }
    std::string path = mapped_path(h);
    const size_t v = ver();
    if (v < 90000 || v > 999999) {
        say(load_why, sizeof load_why, "%s reports cuDNN version %zu; cuDNN 9 is needed", path.c_str(), v);
        dlclose(h);
        return;
    }
    /* the frontend's own dlopen of the CUDA runtime must find the one this module runs on */
    if (!getenv("CUDNN_FRONTEND_CUDART_LIB_NAME")) {
        const std::string rt = object_of(reinterpret_cast<const void *>(&cudaGetDevice));
        if (!rt.empty()) setenv("CUDNN_FRONTEND_CUDART_LIB_NAME", rt.c_str(), 0);
    }
    fe::cudnn_dlhandle = h;
    loaded.version = (int)v;
    loaded.candidates = candidates;
    snprintf(loaded.path, sizeof loaded.path, "%s", path.c_str());
}

/* ---- graphs ---- */

enum : int64_t { UID_Q = 1, UID_K, UID_V, UID_O, UID_STATS, UID_DO, UID_DQ, UID_DK, UID_DV };

using shape_key = std::tuple<int, int, int, int, int, float, int>; /* device, B, T, H, hd, scale, deterministic */

} // namespace

struct cudnn_sdpa {
    int B, T, H, hd;
    int deterministic;    /* the backward's mode (cudnn_sdpa_get) */
    cudnnHandle_t handle; /* the device's (shared by its shapes) */
    std::shared_ptr<fe::graph::Graph> fwd, bwd;
    size_t workspace;
};

namespace {

std::mutex cache_mu;
std::map<shape_key, std::unique_ptr<cudnn_sdpa>> cache;
/* One handle per device for the process's life, never destroyed: at exit the CUDA runtime may be
 * gone before static destructors run, and a map left on the heap keeps the handles reachable, so a
 * leak checker does not count them (a static map's destructor dropped the only pointers). */
std::map<int, cudnnHandle_t> &handles = *new std::map<int, cudnnHandle_t>;

std::string why_of(const fe::error_t &e, const char *stage)
{
    return std::string(stage) + ": " + const_cast<fe::error_t &>(e).get_message();
}

/* q, k, v of qkv [B,T,3,H,hd] seen as [B,H,T,hd]: one row of a token holds all three */
fe::graph::Tensor_attributes qkv_view(const char *name, int64_t uid, const cudnn_sdpa &a)
{
    const int64_t B = a.B, T = a.T, H = a.H, hd = a.hd, row = 3 * H * hd;
    return fe::graph::Tensor_attributes()
        .set_name(name)
        .set_uid(uid)
        .set_dim({B, H, T, hd})
        .set_stride({T * row, hd, row, 1});
}

/* o, dO [B,T,H,hd] seen as [B,H,T,hd] */
fe::graph::Tensor_attributes heads_view(const char *name, int64_t uid, const cudnn_sdpa &a)
{
    const int64_t B = a.B, T = a.T, H = a.H, hd = a.hd;
    return fe::graph::Tensor_attributes()
        .set_name(name)
        .set_uid(uid)
        .set_dim({B, H, T, hd})
        .set_stride({T * H * hd, hd, H * hd, 1});
}

void io_types(fe::graph::Graph &g)
{
    g.set_io_data_type(fe::DataType_t::BFLOAT16)
        .set_intermediate_data_type(fe::DataType_t::FLOAT)
        .set_compute_data_type(fe::DataType_t::FLOAT);
}

/* validate, lower, pick plans by heuristic, check support, build: the reason of the first failure */
std::string finish(fe::graph::Graph &g, cudnnHandle_t h, int64_t &ws)
{
    fe::error_t e = g.validate();
    if (e.is_bad()) return why_of(e, "validate");
    if ((e = g.build_operation_graph(h)).is_bad()) return why_of(e, "build_operation_graph");
    if ((e = g.create_execution_plans({fe::HeurMode_t::A})).is_bad()) return why_of(e, "create_execution_plans");
    if ((e = g.check_support(h)).is_bad()) return why_of(e, "check_support");
    if ((e = g.build_plans(h)).is_bad()) return why_of(e, "build_plans");
    if ((e = g.get_workspace_size(ws)).is_bad()) return why_of(e, "get_workspace_size");
    return "";
}

std::string build(cudnn_sdpa &a, float scale)
{
    const int64_t B = a.B, T = a.T, H = a.H;
    int64_t ws_f = 0, ws_b = 0;
    {
        auto g = std::make_shared<fe::graph::Graph>();
        io_types(*g);
        auto q = g->tensor(qkv_view("Q", UID_Q, a)), k = g->tensor(qkv_view("K", UID_K, a)),
             v = g->tensor(qkv_view("V", UID_V, a));
        auto opt =
            fe::graph::SDPA_attributes().set_name("instbench_sdpa_fwd").set_generate_stats(true).set_attn_scale(scale);
        auto [o, stats] = g->sdpa(q, k, v, opt);
        o->set_output(true)
            .set_uid(UID_O)
            .set_dim({B, H, T, (int64_t)a.hd})
            .set_stride({T * H * a.hd, (int64_t)a.hd, H * a.hd, 1});
        /* the statistics stay fp32: the backward recomputes the probabilities from them */
        stats->set_output(true)
            .set_uid(UID_STATS)
            .set_data_type(fe::DataType_t::FLOAT)
            .set_dim({B, H, T, 1})
            .set_stride({H * T, T, 1, 1});
        std::string why = finish(*g, a.handle, ws_f);
        if (!why.empty()) return "forward " + why;
        a.fwd = g;
    }
    {
        auto g = std::make_shared<fe::graph::Graph>();
        io_types(*g);
        auto q = g->tensor(qkv_view("Q", UID_Q, a)), k = g->tensor(qkv_view("K", UID_K, a)),
             v = g->tensor(qkv_view("V", UID_V, a));
        auto o = g->tensor(heads_view("O", UID_O, a)), dO = g->tensor(heads_view("dO", UID_DO, a));
        auto stats = g->tensor(fe::graph::Tensor_attributes()
                                   .set_name("Stats")
                                   .set_uid(UID_STATS)
                                   .set_dim({B, H, T, 1})
                                   .set_stride({H * T, T, 1, 1})
                                   .set_data_type(fe::DataType_t::FLOAT));
        /* deterministic: the same inputs give the same gradients bit for bit, run after run (a
         * benchmark whose loss curve moves between identical runs is not reproducible); the
         * caller falls back to the other mode where this one cannot be built */
        auto opt = fe::graph::SDPA_backward_attributes()
                       .set_name("instbench_sdpa_bwd")
                       .set_attn_scale(scale)
                       .set_deterministic_algorithm(a.deterministic != 0);
        auto [dq, dk, dv] = g->sdpa_backward(q, k, v, o, dO, stats, opt);
        auto grad = qkv_view("", 0, a);
        dq->set_output(true).set_uid(UID_DQ).set_dim(grad.get_dim()).set_stride(grad.get_stride());
        dk->set_output(true).set_uid(UID_DK).set_dim(grad.get_dim()).set_stride(grad.get_stride());
        dv->set_output(true).set_uid(UID_DV).set_dim(grad.get_dim()).set_stride(grad.get_stride());
        std::string why = finish(*g, a.handle, ws_b);
        if (!why.empty()) return "backward " + why;
        a.bwd = g;
    }
    a.workspace = (size_t)(ws_f > ws_b ? ws_f : ws_b);
    return "";
}

/* byte offsets of k and v inside a qkv row */
const char *part(const void *qkv, int which, const cudnn_sdpa *a)
{
    return static_cast<const char *>(qkv) + (size_t)which * a->H * a->hd * 2;
}

int run(const cudnn_sdpa *a, const std::shared_ptr<fe::graph::Graph> &g, std::unordered_map<int64_t, void *> &pack,
        void *ws, cudaStream_t s, char *why, size_t n, const char *what)
{
    try {
        if (fe::detail::set_stream(a->handle, s) != CUDNN_STATUS_SUCCESS) {
            say(why, n, "cuDNN %s: cudnnSetStream failed", what);
            return -1;
        }
        fe::error_t e = g->execute(a->handle, pack, ws);
        if (e.is_bad()) {
            say(why, n, "cuDNN %s: %s", what, e.get_message().c_str());
            return -1;
        }
    } catch (const std::exception &ex) {
        say(why, n, "cuDNN %s: %s", what, ex.what());
        return -1;
    }
    return 0;
}

} // namespace

extern "C" int cudnn_sdpa_load(cudnn_sdpa_lib *lib, char *why, size_t why_len)
{
    std::call_once(load_once, [] {
        try {
            load_cudnn();
        } catch (const std::exception &ex) {
            say(load_why, sizeof load_why, "loading cuDNN: %s", ex.what());
            loaded.version = 0;
        }
    });
    if (!loaded.version) {
        say(why, why_len, "%s", load_why);
        return -1;
    }
    if (lib) *lib = loaded;
    return 0;
}

extern "C" cudnn_sdpa *cudnn_sdpa_get(int B, int T, int H, int hd, float scale, int deterministic, char *why,
                                      size_t why_len)
{
    if (cudnn_sdpa_load(nullptr, why, why_len)) return nullptr;
    if (B < 1 || T < 1 || H < 1 || hd < 1) {
        say(why, why_len, "cuDNN attention: bad shape B=%d T=%d H=%d hd=%d", B, T, H, hd);
        return nullptr;
    }
    int device = -1;
    if (cudaGetDevice(&device) != cudaSuccess) {
        cudaGetLastError();
        say(why, why_len, "cuDNN attention: no current CUDA device");
        return nullptr;
    }
    std::lock_guard<std::mutex> lock(cache_mu);
    const shape_key key{device, B, T, H, hd, scale, deterministic ? 1 : 0};
    auto it = cache.find(key);
    if (it != cache.end()) return it->second.get();
    try {
        auto h = handles.find(device);
        if (h == handles.end()) {
            cudnnHandle_t nh = nullptr;
            const cudnnStatus_t st = fe::detail::create_handle(&nh);
            if (st != CUDNN_STATUS_SUCCESS) {
                say(why, why_len, "cudnnCreate failed on GPU %d (status %d)", device, (int)st);
                return nullptr;
            }
            h = handles.emplace(device, nh).first;
        }
        auto a = std::make_unique<cudnn_sdpa>();
        a->B = B, a->T = T, a->H = H, a->hd = hd, a->handle = h->second, a->workspace = 0;
        a->deterministic = deterministic ? 1 : 0;
        const std::string w = build(*a, scale);
        if (!w.empty()) {
            say(why, why_len, "cuDNN %d.%d.%d cannot run attention at B=%d T=%d H=%d hd=%d (%s backward): %s",
                loaded.version / 10000, loaded.version / 100 % 100, loaded.version % 100, B, T, H, hd,
                deterministic ? "deterministic" : "non-deterministic", w.c_str());
            return nullptr;
        }
        return cache.emplace(key, std::move(a)).first->second.get();
    } catch (const std::exception &ex) {
        say(why, why_len, "cuDNN attention: %s", ex.what());
        return nullptr;
    }
}

extern "C" size_t cudnn_sdpa_workspace(const cudnn_sdpa *a) { return a ? a->workspace : 0; }

extern "C" int cudnn_sdpa_forward(const cudnn_sdpa *a, const void *qkv, void *o, float *stats, void *workspace,
                                  cudaStream_t s, char *why, size_t why_len)
{
    std::unordered_map<int64_t, void *> pack = {{UID_Q, const_cast<char *>(part(qkv, 0, a))},
                                                {UID_K, const_cast<char *>(part(qkv, 1, a))},
                                                {UID_V, const_cast<char *>(part(qkv, 2, a))},
                                                {UID_O, o},
                                                {UID_STATS, stats}};
    return run(a, a->fwd, pack, workspace, s, why, why_len, "attention forward");
}

extern "C" int cudnn_sdpa_backward(const cudnn_sdpa *a, const void *qkv, const void *o, const void *dO,
                                   const float *stats, void *dqkv, void *workspace, cudaStream_t s, char *why,
                                   size_t why_len)
{
    std::unordered_map<int64_t, void *> pack = {{UID_Q, const_cast<char *>(part(qkv, 0, a))},
                                                {UID_K, const_cast<char *>(part(qkv, 1, a))},
                                                {UID_V, const_cast<char *>(part(qkv, 2, a))},
                                                {UID_O, const_cast<void *>(o)},
                                                {UID_DO, const_cast<void *>(dO)},
                                                {UID_STATS, const_cast<float *>(stats)},
                                                {UID_DQ, const_cast<char *>(part(dqkv, 0, a))},
                                                {UID_DK, const_cast<char *>(part(dqkv, 1, a))},
                                                {UID_DV, const_cast<char *>(part(dqkv, 2, a))}};
    return run(a, a->bwd, pack, workspace, s, why, why_len, "attention backward");
}
