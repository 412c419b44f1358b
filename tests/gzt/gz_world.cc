// A stand-in gz-sim world for the gz backend's tests, built on the real
// ignition-transport 11 library (Debian 12): one tracked robot on a plane.
// It does what gz-sim's stock systems do for the Kenaf SDF in config/:
//   TrackedVehicle: /model/<M>/cmd_vel (Twist) to track speeds
//     L = v - w * sep / (2 * eff), R = v + w * sep / (2 * eff);
//     the tracks reach them at a bounded acceleration and move the body
//     (skid steer: forward speed (L + R) / 2, yaw rate (R - L) * eff / sep);
//   JointPositionController per flipper: /model/<M>/joint/<J>/0/cmd_pos
//     (Double), the joint turns toward it at a bounded rate;
//   SceneBroadcaster: /world/<W>/pose/info (Pose_V: the model and its base
//     link), /world/<W>/clock (Clock);
//   JointStatePublisher: /world/<W>/model/<M>/joint_state (Model);
//   the world's /world/<W>/control service (WorldControl -> Boolean): pause,
//     step, multi_step, reset (all, time only, model only).
// Sim time runs at real time in 10 ms steps while not paused. It prints
// READY once advertised, and one line per command it takes
// ("cmd_vel v w", "cmd_pos J x", "control ..."), and exits cleanly (the
// library says BYE) on SIGTERM or SIGINT.
// --no-drive: the model has no TrackedVehicle (nobody on cmd_vel);
// --no-pose: the world has no SceneBroadcaster (no pose/info; the clock
// is the simulation runner's and stays). SIGUSR1 loads what was left out
// (it prints LOADED).
#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <ignition/msgs/boolean.pb.h>
#include <ignition/msgs/clock.pb.h>
#include <ignition/msgs/double.pb.h>
#include <ignition/msgs/model.pb.h>
#include <ignition/msgs/pose_v.pb.h>
#include <ignition/msgs/twist.pb.h>
#include <ignition/msgs/world_control.pb.h>
#include <ignition/transport/Node.hh>

namespace {

std::atomic<bool> quit{false}, load{false};

void on_signal(int) { quit = true; }
void on_usr1(int) { load = true; }

struct World {
  std::mutex mu;
  std::string name = "default", model = "kenaf";
  std::vector<std::string> joints{"FLFlipper", "FRFlipper", "RLFlipper", "RRFlipper"};
  double sep = 0.23, eff = 0.5;
  double track_accel = 4.0;   // m/s^2
  double joint_rate = 2.0;    // rad/s
  // state
  double v_cmd = 0, w_cmd = 0;
  double track[2] = {0, 0};   // L, R m/s
  double x = 0, y = 0, yaw = 0;
  std::vector<double> joint_pos = std::vector<double>(4, 0.0);
  std::vector<double> joint_target = std::vector<double>(4, 0.0);
  int64_t sim_ns = 0;
  bool paused = false;
  int steps_pending = 0;

  void Step(double dt) {
    const double d = w_cmd * sep / (2.0 * eff);
    const double want[2] = {v_cmd - d, v_cmd + d};
    for (int s = 0; s < 2; ++s) {
      double dv = want[s] - track[s], lim = track_accel * dt;
      track[s] += dv > lim ? lim : dv < -lim ? -lim : dv;
    }
    const double v = (track[0] + track[1]) / 2.0;
    const double w = (track[1] - track[0]) * eff / sep;
    // exact arc for a constant v, w over the step
    if (std::fabs(w) > 1e-12) {
      x += v / w * (std::sin(yaw + w * dt) - std::sin(yaw));
      y -= v / w * (std::cos(yaw + w * dt) - std::cos(yaw));
    } else {
      x += v * std::cos(yaw) * dt;
      y += v * std::sin(yaw) * dt;
    }
    yaw = std::remainder(yaw + w * dt, 2.0 * M_PI);
    for (size_t k = 0; k < joint_pos.size(); ++k) {
      double e = joint_target[k] - joint_pos[k], lim = joint_rate * dt;
      joint_pos[k] += e > lim ? lim : e < -lim ? -lim : e;
    }
    sim_ns += static_cast<int64_t>(dt * 1e9 + 0.5);
  }

  void ResetModel() {
    x = y = yaw = 0;
    track[0] = track[1] = 0;
    v_cmd = w_cmd = 0;
    for (auto &p : joint_pos) p = 0;
    for (auto &t : joint_target) t = 0;
  }
};

World world;

void SetStamp(ignition::msgs::Header *h, int64_t ns) {
  h->mutable_stamp()->set_sec(ns / 1000000000);
  h->mutable_stamp()->set_nsec(static_cast<int32_t>(ns % 1000000000));
}

bool OnControl(const ignition::msgs::WorldControl &req, ignition::msgs::Boolean &rep) {
  std::lock_guard<std::mutex> lk(world.mu);
  world.paused = req.pause();
  if (req.multi_step() > 0)
    world.steps_pending += static_cast<int>(req.multi_step());
  else if (req.step())
    world.steps_pending += 1;
  if (req.has_reset()) {
    if (req.reset().all() || req.reset().time_only()) world.sim_ns = 0;
    if (req.reset().all() || req.reset().model_only()) world.ResetModel();
  }
  std::printf("control pause=%d step=%d multi_step=%u reset=%d\n", req.pause() ? 1 : 0,
              req.step() ? 1 : 0, req.multi_step(), req.has_reset() ? 1 : 0);
  std::fflush(stdout);
  rep.set_data(true);
  return true;
}

}  // namespace

int main(int argc, char **argv) {
  double rate_hz = 50.0;
  bool drive = true, pose = true;
  for (int i = 1; i < argc; ++i) {
    std::string k = argv[i];
    if (k == "--no-drive") { drive = false; continue; }
    if (k == "--no-pose") { pose = false; continue; }
    if (i + 1 >= argc) {
      std::fprintf(stderr, "gz_world: %s needs a value\n", k.c_str());
      return 2;
    }
    std::string v = argv[++i];
    if (k == "--world") world.name = v;
    else if (k == "--model") world.model = v;
    else if (k == "--separation") world.sep = std::atof(v.c_str());
    else if (k == "--efficiency") world.eff = std::atof(v.c_str());
    else if (k == "--rate") rate_hz = std::atof(v.c_str());
    else if (k == "--joints") {
      world.joints.clear();
      size_t p = 0;
      while (p <= v.size()) {
        size_t c = v.find(',', p);
        if (c == std::string::npos) c = v.size();
        world.joints.push_back(v.substr(p, c - p));
        p = c + 1;
      }
      world.joint_pos.assign(world.joints.size(), 0.0);
      world.joint_target.assign(world.joints.size(), 0.0);
    } else {
      std::fprintf(stderr, "gz_world: unknown option %s\n", k.c_str());
      return 2;
    }
  }
  std::signal(SIGTERM, on_signal);
  std::signal(SIGINT, on_signal);
  std::signal(SIGUSR1, on_usr1);

  ignition::transport::Node node;
  const std::string wp = "/world/" + world.name, mp = "/model/" + world.model;
  auto clock_pub = node.Advertise<ignition::msgs::Clock>(wp + "/clock");
  ignition::transport::Node::Publisher pose_pub;
  if (pose) pose_pub = node.Advertise<ignition::msgs::Pose_V>(wp + "/pose/info");
  auto joint_pub =
      node.Advertise<ignition::msgs::Model>(wp + "/model/" + world.model + "/joint_state");
  std::function<void(const ignition::msgs::Twist &)> on_twist =
      [](const ignition::msgs::Twist &m) {
        std::lock_guard<std::mutex> lk(world.mu);
        world.v_cmd = m.linear().x();
        world.w_cmd = m.angular().z();
        std::printf("cmd_vel %.6f %.6f\n", world.v_cmd, world.w_cmd);
        std::fflush(stdout);
      };
  if (drive && !node.Subscribe(mp + "/cmd_vel", on_twist)) return 1;
  for (size_t k = 0; k < world.joints.size(); ++k) {
    std::function<void(const ignition::msgs::Double &)> cb = [k](const ignition::msgs::Double &m) {
      std::lock_guard<std::mutex> lk(world.mu);
      world.joint_target[k] = m.data();
      std::printf("cmd_pos %s %.6f\n", world.joints[k].c_str(), m.data());
      std::fflush(stdout);
    };
    if (!node.Subscribe(mp + "/joint/" + world.joints[k] + "/0/cmd_pos", cb)) return 1;
  }
  if (!node.Advertise(wp + "/control", OnControl)) return 1;
  std::printf("READY\n");
  std::fflush(stdout);

  const double dt = 0.01;
  const int publish_every = std::max(1, static_cast<int>(std::lround(1.0 / (rate_hz * dt))));
  auto next = std::chrono::steady_clock::now();
  for (int tick = 0; !quit; ++tick) {
    next += std::chrono::milliseconds(10);
    std::this_thread::sleep_until(next);
    if (load.exchange(false) && (!drive || !pose)) {
      if (!drive && !node.Subscribe(mp + "/cmd_vel", on_twist)) return 1;
      if (!pose) pose_pub = node.Advertise<ignition::msgs::Pose_V>(wp + "/pose/info");
      drive = pose = true;
      std::printf("LOADED\n");
      std::fflush(stdout);
    }
    ignition::msgs::Clock clk;
    ignition::msgs::Pose_V poses;
    ignition::msgs::Model joints;
    {
      std::lock_guard<std::mutex> lk(world.mu);
      if (!world.paused) {
        world.Step(dt);
      } else if (world.steps_pending > 0) {
        world.Step(dt);
        world.steps_pending--;
      }
      if (tick % publish_every != 0) continue;
      clk.mutable_sim()->set_sec(world.sim_ns / 1000000000);
      clk.mutable_sim()->set_nsec(static_cast<int32_t>(world.sim_ns % 1000000000));
      SetStamp(poses.mutable_header(), world.sim_ns);
      for (const char *n : {"ground_plane", "model", "base_link"}) {
        auto *p = poses.add_pose();
        bool ground = std::strcmp(n, "ground_plane") == 0;
        p->set_name(std::strcmp(n, "model") == 0 ? world.model : n);
        p->mutable_position()->set_x(ground ? 0 : world.x);
        p->mutable_position()->set_y(ground ? 0 : world.y);
        p->mutable_position()->set_z(ground ? 0 : 0.09);
        p->mutable_orientation()->set_z(ground ? 0 : std::sin(world.yaw / 2));
        p->mutable_orientation()->set_w(ground ? 1 : std::cos(world.yaw / 2));
      }
      SetStamp(joints.mutable_header(), world.sim_ns);
      joints.set_name(world.model);
      for (size_t k = 0; k < world.joints.size(); ++k) {
        auto *j = joints.add_joint();
        j->set_name(world.joints[k]);
        j->mutable_axis1()->set_position(world.joint_pos[k]);
      }
    }
    clock_pub.Publish(clk);
    if (pose) pose_pub.Publish(poses);
    joint_pub.Publish(joints);
  }
  std::printf("BYE\n");
  std::fflush(stdout);
  return 0;
}
