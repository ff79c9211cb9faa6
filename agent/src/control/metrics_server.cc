#include "control/metrics_server.h"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cstring>
#include <stdexcept>

#include "control/metrics_exposition.h"

namespace metron {

namespace {

constexpr size_t kMaxRequest = 8192;

void write_all(int fd, const std::string& s) {
  size_t off = 0;
  while (off < s.size()) {
    const ssize_t n = ::send(fd, s.data() + off, s.size() - off, MSG_NOSIGNAL);
    if (n <= 0) return;  // the client went away: nothing to tell it
    off += static_cast<size_t>(n);
  }
}

std::string response(const char* status, const char* type, const std::string& body) {
  return std::string("HTTP/1.1 ") + status + "\r\nContent-Type: " + type +
         "\r\nContent-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
}

}  // namespace

std::unique_ptr<MetricsServer> MetricsServer::Start(const std::string& listen, AgentBackend* backend,
                                                    std::string version) {
  const size_t colon = listen.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == listen.size())
    throw std::runtime_error("--metrics-listen '" + listen + "': expected HOST:PORT");
  std::string host = listen.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  const std::string service = listen.substr(colon + 1);
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* res = nullptr;
  if (int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &res); rc != 0)
    throw std::runtime_error("--metrics-listen '" + listen + "': " + ::gai_strerror(rc));
  std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> guard(res, &::freeaddrinfo);
  const int fd = ::socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error("--metrics-listen '" + listen + "': socket: " + std::strerror(errno));
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (::bind(fd, res->ai_addr, res->ai_addrlen) != 0 || ::listen(fd, 16) != 0) {
    const std::string err = std::strerror(errno);
    ::close(fd);
    throw std::runtime_error("--metrics-listen '" + listen + "': cannot listen: " + err);
  }
  sockaddr_storage bound{};
  socklen_t len = sizeof bound;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len);
  char port[NI_MAXSERV];
  ::getnameinfo(reinterpret_cast<sockaddr*>(&bound), len, nullptr, 0, port, sizeof port, NI_NUMERICSERV);
  return std::unique_ptr<MetricsServer>(new MetricsServer(fd, std::stoi(port), backend, std::move(version)));
}

MetricsServer::MetricsServer(int fd, int port, AgentBackend* backend, std::string version)
    : fd_(fd), port_(port), backend_(backend), version_(std::move(version)), thread_([this] { Run(); }) {}

MetricsServer::~MetricsServer() { Stop(); }

void MetricsServer::Stop() {
  if (stop_.exchange(true)) return;
  thread_.join();
  ::close(fd_);
}

void MetricsServer::Run() {
  while (!stop_) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, 200) <= 0) continue;
    const int conn = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (conn < 0) continue;
    const timeval timeout{2, 0};
    ::setsockopt(conn, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    ::setsockopt(conn, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
    Serve(conn);
    ::close(conn);
  }
}

void MetricsServer::Serve(int conn) {
  std::string req;
  char buf[1024];
  while (req.find("\r\n\r\n") == std::string::npos && req.size() < kMaxRequest) {
    const ssize_t n = ::recv(conn, buf, sizeof buf, 0);
    if (n <= 0) return;  // closed or timed out before a whole request
    req.append(buf, static_cast<size_t>(n));
  }
  const size_t sp1 = req.find(' ');
  const size_t sp2 = sp1 == std::string::npos ? sp1 : req.find(' ', sp1 + 1);
  if (sp2 == std::string::npos) {
    write_all(conn, response("400 Bad Request", "text/plain", "malformed request line\n"));
    return;
  }
  const std::string method = req.substr(0, sp1);
  std::string path = req.substr(sp1 + 1, sp2 - sp1 - 1);
  path = path.substr(0, path.find('?'));
  if (path != "/metrics") {
    write_all(conn, response("404 Not Found", "text/plain", "only /metrics is served here\n"));
    return;
  }
  if (method != "GET" && method != "HEAD") {
    write_all(conn, response("405 Method Not Allowed", "text/plain", "GET /metrics\n"));
    return;
  }
  pb::Stats stats;
  const grpc::Status s = backend_->GetStats(pb::StatsRequest(), &stats);
  if (!s.ok()) {
    write_all(conn, response("500 Internal Server Error", "text/plain", "GetStats: " + s.error_message() + "\n"));
    return;
  }
  std::string answer = response("200 OK", "text/plain; version=0.0.4; charset=utf-8",
                                FormatAgentMetrics(stats, version_));
  if (method == "HEAD") answer.resize(answer.find("\r\n\r\n") + 4);
  write_all(conn, answer);
}

}  // namespace metron
