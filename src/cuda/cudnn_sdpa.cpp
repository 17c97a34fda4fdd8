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

#include <cudnn_frontend.h>

namespace cudnn_frontend {
void *cudnn_dlhandle = nullptr;   /* the frontend's dynamic-loading handle (declared extern there) */
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

/* pip's nvidia-cudnn-cu12/-cu13 wheels (what PyTorch installs), where no libcudnn.so.9 is on the
 * loader's path: the usual places a Python environment lives. */
void *open_from_site_packages(std::string &tried)
{
    static const char *patterns[] = {
        "/opt/*/.venv/lib/python3*/site-packages/nvidia/cudnn/lib/libcudnn.so.9",
        "/opt/*/lib/python3*/site-packages/nvidia/cudnn/lib/libcudnn.so.9",
        "/usr/local/lib/python3*/dist-packages/nvidia/cudnn/lib/libcudnn.so.9",
        "/usr/local/lib/python3*/site-packages/nvidia/cudnn/lib/libcudnn.so.9",
        "/usr/lib/python3/dist-packages/nvidia/cudnn/lib/libcudnn.so.9",
        "/opt/conda/lib/python3*/site-packages/nvidia/cudnn/lib/libcudnn.so.9",
        "/opt/conda/envs/*/lib/python3*/site-packages/nvidia/cudnn/lib/libcudnn.so.9",
    };
    std::string venv_pattern;
    if (const char *venv = getenv("VIRTUAL_ENV"); venv && *venv)
        venv_pattern = std::string(venv) + "/lib/python3*/site-packages/nvidia/cudnn/lib/libcudnn.so.9";
    std::string home_pattern;
    if (const char *home = getenv("HOME"); home && *home)
        home_pattern = std::string(home) + "/.local/lib/python3*/site-packages/nvidia/cudnn/lib/libcudnn.so.9";
    std::vector<std::string> all;
    if (!venv_pattern.empty()) all.push_back(venv_pattern);
    for (const char *p : patterns) all.push_back(p);
    if (!home_pattern.empty()) all.push_back(home_pattern);
    for (const std::string &pat : all) {
        glob_t g;
        if (glob(pat.c_str(), 0, nullptr, &g) == 0) {
            for (size_t i = 0; i < g.gl_pathc; i++)
                if (void *h = try_open(g.gl_pathv[i], tried)) {
                    globfree(&g);
                    return h;
                }
        }
        globfree(&g);
    }
    return nullptr;
}

void load_cudnn()
{
    std::string tried;
    void *h = nullptr;
    const char *forced = getenv("INSTBENCH_CUDNN_LIBRARY");
    if (forced && *forced) {
        h = try_open(forced, tried);
        if (!h) {
            say(load_why, sizeof load_why, "INSTBENCH_CUDNN_LIBRARY=%s cannot be loaded (%s)", forced, tried.c_str());
            return;
        }
    } else {
        h = try_open("libcudnn.so.9", tried);
        if (!h) h = open_from_site_packages(tried);
        if (!h) {
            say(load_why, sizeof load_why,
                "no libcudnn.so.9 on the loader's path or in a Python install's site-packages/nvidia/cudnn "
                "(set INSTBENCH_CUDNN_LIBRARY to one): %s",
                tried.c_str());
            return;
        }
    }
    using version_fn = size_t (*)(void);
    auto ver = reinterpret_cast<version_fn>(dlsym(h, "cudnnGetVersion"));
    if (!ver) {
        say(load_why, sizeof load_why, "the cuDNN library loaded has no cudnnGetVersion");
        dlclose(h);
        return;
    }
    struct link_map *lm = nullptr;
    std::string path = dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name ? lm->l_name : "";
    if (path.empty()) path = object_of(reinterpret_cast<void *>(ver));
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
    snprintf(loaded.path, sizeof loaded.path, "%s", path.c_str());
}

/* ---- graphs ---- */

enum : int64_t { UID_Q = 1, UID_K, UID_V, UID_O, UID_STATS, UID_DO, UID_DQ, UID_DK, UID_DV };

using shape_key = std::tuple<int, int, int, int, int, float>;   /* device, B, T, H, hd, scale */

}   // namespace

struct cudnn_sdpa {
    int B, T, H, hd;
    cudnnHandle_t handle;   /* the device's (shared by its shapes) */
    std::shared_ptr<fe::graph::Graph> fwd, bwd;
    size_t workspace;
};

namespace {

std::mutex cache_mu;
std::map<shape_key, std::unique_ptr<cudnn_sdpa>> cache;
std::map<int, cudnnHandle_t> handles;

std::string why_of(const fe::error_t &e, const char *stage)
{
    return std::string(stage) + ": " + const_cast<fe::error_t &>(e).get_message();
}

/* q, k, v of qkv [B,T,3,H,hd] seen as [B,H,T,hd]: one row of a token holds all three */
fe::graph::Tensor_attributes qkv_view(const char *name, int64_t uid, const cudnn_sdpa &a)
{
    const int64_t B = a.B, T = a.T, H = a.H, hd = a.hd, row = 3 * H * hd;
    return fe::graph::Tensor_attributes().set_name(name).set_uid(uid).set_dim({B, H, T, hd}).set_stride(
        {T * row, hd, row, 1});
}

/* o, dO [B,T,H,hd] seen as [B,H,T,hd] */
fe::graph::Tensor_attributes heads_view(const char *name, int64_t uid, const cudnn_sdpa &a)
{
    const int64_t B = a.B, T = a.T, H = a.H, hd = a.hd;
    return fe::graph::Tensor_attributes().set_name(name).set_uid(uid).set_dim({B, H, T, hd}).set_stride(
        {T * H * hd, hd, H * hd, 1});
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
        auto opt = fe::graph::SDPA_attributes().set_name("instbench_sdpa_fwd").set_generate_stats(true).set_attn_scale(
            scale);
        auto [o, stats] = g->sdpa(q, k, v, opt);
        o->set_output(true).set_uid(UID_O).set_dim({B, H, T, (int64_t)a.hd}).set_stride(
            {T * H * a.hd, (int64_t)a.hd, H * a.hd, 1});
        /* the statistics stay fp32: the backward recomputes the probabilities from them */
        stats->set_output(true).set_uid(UID_STATS).set_data_type(fe::DataType_t::FLOAT).set_dim({B, H, T, 1}).set_stride(
            {H * T, T, 1, 1});
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
         * benchmark whose loss curve moves between identical runs is not reproducible) */
        const char *nd = getenv("INSTBENCH_CUDNN_NONDETERMINISTIC");
        auto opt = fe::graph::SDPA_backward_attributes()
                       .set_name("instbench_sdpa_bwd")
                       .set_attn_scale(scale)
                       .set_deterministic_algorithm(!(nd && !strcmp(nd, "1")));
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

}   // namespace

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

extern "C" cudnn_sdpa *cudnn_sdpa_get(int B, int T, int H, int hd, float scale, char *why, size_t why_len)
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
    const shape_key key{device, B, T, H, hd, scale};
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
        const std::string w = build(*a, scale);
        if (!w.empty()) {
            say(why, why_len, "cuDNN %d.%d.%d cannot run attention at B=%d T=%d H=%d hd=%d: %s", loaded.version / 10000,
                loaded.version / 100 % 100, loaded.version % 100, B, T, H, hd, w.c_str());
            return nullptr;
        }
        return cache.emplace(key, std::move(a)).first->second.get();
    } catch (const std::exception &ex) {
        say(why, why_len, "cuDNN attention: %s", ex.what());
        return nullptr;
    }
}

extern "C" size_t cudnn_sdpa_workspace(const cudnn_sdpa *a)
{
    return a ? a->workspace : 0;
}

extern "C" int cudnn_sdpa_forward(const cudnn_sdpa *a, const void *qkv, void *o, float *stats, void *workspace,
                                  cudaStream_t s, char *why, size_t why_len)
{
    std::unordered_map<int64_t, void *> pack = {
        {UID_Q, const_cast<char *>(part(qkv, 0, a))}, {UID_K, const_cast<char *>(part(qkv, 1, a))},
        {UID_V, const_cast<char *>(part(qkv, 2, a))}, {UID_O, o}, {UID_STATS, stats}};
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
