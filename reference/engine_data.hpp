// An engine's own fields, held by the generic Case and Step without the generic code knowing
// their type (SGLang's forward, for example). A value: copies copy the fields, == compares them.
// Only the engine that put a type in reads it back (get<T>); everyone else passes it along.
#pragma once

#include <memory>
#include <typeinfo>
#include <utility>

namespace r3 {

class EngineData {
 public:
  EngineData() = default;
  EngineData(const EngineData& other) : held_(other.held_ ? other.held_->clone() : nullptr) {}
  EngineData(EngineData&&) noexcept = default;
  EngineData& operator=(const EngineData& other) {
    if (this != &other) held_ = other.held_ ? other.held_->clone() : nullptr;
    return *this;
  }
  EngineData& operator=(EngineData&&) noexcept = default;
  ~EngineData() = default;

  template <class T>
  T& emplace(T value = T{}) {
    auto held = std::make_unique<Held<T>>(std::move(value));
    T& out = held->value;
    held_ = std::move(held);
    return out;
  }
  // The fields when they are a T, else null.
  template <class T>
  const T* get() const {
    if (!held_) return nullptr;
    const Base& held = *held_;
    return typeid(held) == typeid(Held<T>) ? &static_cast<const Held<T>&>(held).value : nullptr;
  }
  template <class T>
  T* get() {
    return const_cast<T*>(static_cast<const EngineData&>(*this).get<T>());
  }
  bool has_value() const { return held_ != nullptr; }
  explicit operator bool() const { return has_value(); }
  void reset() { held_.reset(); }

  bool operator==(const EngineData& other) const {
    if (!held_ || !other.held_) return !held_ && !other.held_;
    return held_->equals(*other.held_);
  }

 private:
  struct Base {
    virtual ~Base() = default;
    virtual std::unique_ptr<Base> clone() const = 0;
    virtual bool equals(const Base& other) const = 0;
  };
  template <class T>
  struct Held final : Base {
    explicit Held(T v) : value(std::move(v)) {}
    std::unique_ptr<Base> clone() const override { return std::make_unique<Held>(value); }
    bool equals(const Base& other) const override {
      return typeid(other) == typeid(Held) && static_cast<const Held&>(other).value == value;
    }
    T value;
  };
  std::unique_ptr<Base> held_;
};

}  // namespace r3
