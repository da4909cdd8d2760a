#pragma once
// Lets gloo's rendezvous run through ringlab's TCP store: gloo::rendezvous::Store on top of a
// StoreClient. Keys get a prefix so gloo's entries cannot collide with anything else in the store.
#include <gloo/rendezvous/store.h>

#include <chrono>
#include <string>
#include <vector>

namespace ringlab {

class StoreClient;

class GlooStoreAdapter : public gloo::rendezvous::Store {
 public:
  explicit GlooStoreAdapter(StoreClient& client, std::string prefix = "gloo/");

  void set(const std::string& key, const std::vector<char>& data) override;
  std::vector<char> get(const std::string& key) override;
  void wait(const std::vector<std::string>& keys) override;
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) override;

 private:
  std::vector<std::string> prefixed(const std::vector<std::string>& keys) const;

  StoreClient& client_;
  std::string prefix_;
};

}  // namespace ringlab
