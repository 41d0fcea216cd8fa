#pragma once
// zpmix's C++ API: RAII over the standard PMIx C API (one implementation, libpmix).
//
//   zpmix::Client pmix;                                   // PMIx_Init ... PMIx_Finalize
//   pmix.put(PMIX_GLOBAL, "card", std::string("addr"));
//   pmix.commit();
//   pmix.fence({}, /*collect=*/true);                     // the caller's whole namespace
//   auto card = pmix.get<std::string>({pmix.self().nspace, 1}, "card");
//   auto size = pmix.get<std::uint32_t>(pmix.job(), PMIX_JOB_SIZE);
//
// Failures throw zpmix::Error carrying the PMIx status; the *_async calls return std::future.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <future>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

#include <pmix.h>

namespace zpmix {

struct Error : std::runtime_error {
    pmix_status_t status;
    Error(pmix_status_t s, const std::string &what)
        : std::runtime_error(what + ": " + PMIx_Error_string(s)), status(s) {}
};

inline void check(pmix_status_t rc, const char *what) {
    if (rc != PMIX_SUCCESS) throw Error(rc, what);
}

struct Proc {
    std::string nspace;
    pmix_rank_t rank = PMIX_RANK_WILDCARD;
    bool operator==(const Proc &) const = default;
    pmix_proc_t c() const {
        pmix_proc_t p;
        PMIX_LOAD_PROCID(&p, nspace.c_str(), rank);
        return p;
    }
    static Proc from(const pmix_proc_t &p) {
        return {std::string(p.nspace, strnlen(p.nspace, PMIX_MAX_NSLEN)), p.rank};
    }
};

using Bytes = std::vector<std::byte>;

// The common PMIx value types; anything else reads as PMIX_ERR_NOT_SUPPORTED.
class Value {
  public:
    using Variant =
        std::variant<std::monostate, bool, std::uint8_t, std::uint16_t, std::uint32_t,
                     std::uint64_t, std::int32_t, std::int64_t, double, std::string, Bytes, Proc>;
    Value() = default;
    template <class T>
    Value(T v) : v_(std::move(v)) {}
    Value(const char *s) : v_(std::string(s)) {}

    const Variant &variant() const { return v_; }
    template <class T>
    const T &as() const {
        if (auto *p = std::get_if<T>(&v_)) return *p;
        throw Error(PMIX_ERR_TYPE_MISMATCH, "zpmix::Value::as");
    }

    // Loads a pmix_value_t the caller must destruct (PMIX_VALUE_DESTRUCT).
    void load(pmix_value_t &out) const {
        PMIX_VALUE_CONSTRUCT(&out);
        pmix_status_t rc = std::visit(
            [&out](const auto &x) -> pmix_status_t {
                using T = std::decay_t<decltype(x)>;
                if constexpr (std::is_same_v<T, std::monostate>) {
                    return PMIx_Value_load(&out, nullptr, PMIX_UNDEF);
                } else if constexpr (std::is_same_v<T, std::string>) {
                    return PMIx_Value_load(&out, x.c_str(), PMIX_STRING);
                } else if constexpr (std::is_same_v<T, Bytes>) {
                    pmix_byte_object_t bo{
                        reinterpret_cast<char *>(const_cast<std::byte *>(x.data())), x.size()};
                    return PMIx_Value_load(&out, &bo, PMIX_BYTE_OBJECT);
                } else if constexpr (std::is_same_v<T, Proc>) {
                    pmix_proc_t p = x.c();
                    return PMIx_Value_load(&out, &p, PMIX_PROC);
                } else {
                    return PMIx_Value_load(&out, &x, type_of<T>());
                }
            },
            v_);
        check(rc, "PMIx_Value_load");
    }

    static Value from(const pmix_value_t &v) {
        switch (v.type) {
            case PMIX_UNDEF:
                return {};
            case PMIX_BOOL:
                return v.data.flag;
            case PMIX_BYTE:
            case PMIX_UINT8:
                return v.data.uint8;
            case PMIX_UINT16:
                return v.data.uint16;
            case PMIX_UINT32:
                return v.data.uint32;
            case PMIX_PROC_RANK:
                return std::uint32_t{v.data.rank};
            case PMIX_UINT64:
                return v.data.uint64;
            case PMIX_SIZE:
                return std::uint64_t{v.data.size};
            case PMIX_INT:
            case PMIX_INT32:
                return std::int32_t{v.data.int32};
            case PMIX_INT64:
                return v.data.int64;
            case PMIX_PID:
                return std::int64_t{v.data.pid};
            case PMIX_DOUBLE:
                return v.data.dval;
            case PMIX_FLOAT:
                return double{v.data.fval};
            case PMIX_STRING:
                return std::string(v.data.string ? v.data.string : "");
            case PMIX_BYTE_OBJECT: {
                const auto *b = reinterpret_cast<const std::byte *>(v.data.bo.bytes);
                return Bytes(b, b + v.data.bo.size);
            }
            case PMIX_PROC:
                return Proc::from(*v.data.proc);
            default:
                throw Error(PMIX_ERR_NOT_SUPPORTED, "zpmix::Value::from");
        }
    }

  private:
    template <class T>
    static constexpr pmix_data_type_t type_of() {
        if constexpr (std::is_same_v<T, bool>)
            return PMIX_BOOL;
        else if constexpr (std::is_same_v<T, std::uint8_t>)
            return PMIX_UINT8;
        else if constexpr (std::is_same_v<T, std::uint16_t>)
            return PMIX_UINT16;
        else if constexpr (std::is_same_v<T, std::uint32_t>)
            return PMIX_UINT32;
        else if constexpr (std::is_same_v<T, std::uint64_t>)
            return PMIX_UINT64;
        else if constexpr (std::is_same_v<T, std::int32_t>)
            return PMIX_INT32;
        else if constexpr (std::is_same_v<T, std::int64_t>)
            return PMIX_INT64;
        else
            return PMIX_DOUBLE;
    }
    Variant v_;
};

// Directives of a Get or Fence, as a pmix_info_t array that lives as long as this object.
class Directives {
  public:
    Directives &flag(const char *key, bool on = true) {
        if (on) add(key, &on, PMIX_BOOL);
        return *this;
    }
    Directives &timeout(int seconds) {
        if (seconds > 0) add(PMIX_TIMEOUT, &seconds, PMIX_INT);
        return *this;
    }
    ~Directives() {
        for (auto &i : info_) PMIX_INFO_DESTRUCT(&i);
    }
    const pmix_info_t *data() const { return info_.empty() ? nullptr : info_.data(); }
    std::size_t size() const { return info_.size(); }

  private:
    void add(const char *key, const void *v, pmix_data_type_t t) {
        info_.emplace_back();
        PMIX_INFO_CONSTRUCT(&info_.back());
        PMIX_INFO_LOAD(&info_.back(), key, v, t);
    }
    std::vector<pmix_info_t> info_;
};

class Client {
  public:
    Client() {
        pmix_proc_t me;
        check(PMIx_Init(&me, nullptr, 0), "PMIx_Init");
        self_ = Proc::from(me);
    }
    ~Client() { PMIx_Finalize(nullptr, 0); }
    Client(const Client &) = delete;
    Client &operator=(const Client &) = delete;

    const Proc &self() const { return self_; }
    // The caller's job (rank wildcard), for job-level keys.
    Proc job() const { return {self_.nspace, PMIX_RANK_WILDCARD}; }

    void put(pmix_scope_t scope, const std::string &key, const Value &value) {
        pmix_value_t v;
        value.load(v);
        pmix_status_t rc = PMIx_Put(scope, key.c_str(), &v);
        PMIX_VALUE_DESTRUCT(&v);
        check(rc, "PMIx_Put");
    }
    void commit() { check(PMIx_Commit(), "PMIx_Commit"); }

    // procs empty: the caller's whole namespace.
    void fence(const std::vector<Proc> &procs = {}, bool collect = false, int timeout_s = 0) {
        auto p = c_procs(procs);
        Directives d;
        d.flag(PMIX_COLLECT_DATA, collect).timeout(timeout_s);
        check(PMIx_Fence(p.empty() ? nullptr : p.data(), p.size(), d.data(), d.size()),
              "PMIx_Fence");
    }
    std::future<void> fence_async(const std::vector<Proc> &procs = {}, bool collect = false,
                                  int timeout_s = 0) {
        auto p = c_procs(procs);
        Directives d;
        d.flag(PMIX_COLLECT_DATA, collect).timeout(timeout_s);
        auto *promise = new std::promise<void>;
        auto f = promise->get_future();
        pmix_status_t rc = PMIx_Fence_nb(
            p.empty() ? nullptr : p.data(), p.size(), d.data(), d.size(),
            [](pmix_status_t status, void *cbdata) {
                std::unique_ptr<std::promise<void>> pr(static_cast<std::promise<void> *>(cbdata));
                if (status == PMIX_SUCCESS)
                    pr->set_value();
                else
                    pr->set_exception(std::make_exception_ptr(Error(status, "PMIx_Fence_nb")));
            },
            promise);
        if (rc != PMIX_SUCCESS) {
            delete promise;
            throw Error(rc, "PMIx_Fence_nb");
        }
        return f;
    }

    // Throws Error (PMIX_ERR_NOT_FOUND, PMIX_ERR_TIMEOUT...) when there is no value.
    Value get(const Proc &proc, const std::string &key, bool optional = false, int timeout_s = 0) {
        Directives d;
        d.flag(PMIX_OPTIONAL, optional).timeout(timeout_s);
        pmix_proc_t p = proc.c();
        pmix_value_t *v = nullptr;
        check(PMIx_Get(&p, key.c_str(), d.data(), d.size(), &v), "PMIx_Get");
        std::unique_ptr<pmix_value_t, void (*)(pmix_value_t *)> owned(
            v, [](pmix_value_t *x) { PMIX_VALUE_RELEASE(x); });
        return Value::from(*v);
    }
    template <class T>
    T get(const Proc &proc, const std::string &key) {
        return get(proc, key).as<T>();
    }
    // std::nullopt when the key is not there (cached only: never asks the broker).
    std::optional<Value> try_get(const Proc &proc, const std::string &key) {
        try {
            return get(proc, key, true);
        } catch (const Error &e) {
            if (e.status == PMIX_ERR_NOT_FOUND) return std::nullopt;
            throw;
        }
    }
    std::future<Value> get_async(const Proc &proc, const std::string &key, int timeout_s = 0) {
        Directives d;
        d.timeout(timeout_s);
        pmix_proc_t p = proc.c();
        auto *promise = new std::promise<Value>;
        auto f = promise->get_future();
        pmix_status_t rc = PMIx_Get_nb(
            &p, key.c_str(), d.data(), d.size(),
            [](pmix_status_t status, pmix_value_t *kv, void *cbdata) {
                std::unique_ptr<std::promise<Value>> pr(static_cast<std::promise<Value> *>(cbdata));
                try {
                    check(status, "PMIx_Get_nb");
                    pr->set_value(Value::from(*kv));
                } catch (...) {
                    pr->set_exception(std::current_exception());
                }
            },
            promise);
        if (rc != PMIX_SUCCESS) {
            delete promise;
            throw Error(rc, "PMIx_Get_nb");
        }
        return f;
    }

  private:
    static std::vector<pmix_proc_t> c_procs(const std::vector<Proc> &procs) {
        std::vector<pmix_proc_t> out;
        for (const auto &p : procs) out.push_back(p.c());
        return out;
    }
    Proc self_;
};

}  // namespace zpmix
