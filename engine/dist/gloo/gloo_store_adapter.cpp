#include "engine/dist/gloo/gloo_store_adapter.h"

#include <cstdint>

#include "engine/net/store.h"

namespace ringlab {

GlooStoreAdapter::GlooStoreAdapter(StoreClient& client, std::string prefix)
    : client_(client), prefix_(std::move(prefix)) {}

void GlooStoreAdapter::set(const std::string& key, const std::vector<char>& data) {
  client_.set(prefix_ + key, std::vector<uint8_t>(data.begin(), data.end()));
}

std::vector<char> GlooStoreAdapter::get(const std::string& key) {
  const std::vector<uint8_t> value = client_.get(prefix_ + key);
  return std::vector<char>(value.begin(), value.end());
}

void GlooStoreAdapter::wait(const std::vector<std::string>& keys) { client_.wait(prefixed(keys)); }

void GlooStoreAdapter::wait(const std::vector<std::string>& keys,
                            const std::chrono::milliseconds& timeout) {
  client_.wait(prefixed(keys), timeout);
}

std::vector<std::string> GlooStoreAdapter::prefixed(const std::vector<std::string>& keys) const {
  std::vector<std::string> out;
  out.reserve(keys.size());
  for (const auto& k : keys) out.push_back(prefix_ + k);
  return out;
}

}  // namespace ringlab
