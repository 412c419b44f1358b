// The Kenaf world's flipper bridge for Gazebo 9 to 11 (docs/gazebo.md):
// their JointController listens for joint_cmd on ignition-transport only,
// so kenaf-simd's gazebo.msgs.JointCmd on the Classic ~/<model>/joint_cmd
// would reach no one. This model plugin subscribes to it there and hands
// each position target to the model's JointController, whose PID (gains
// from the plugin's SDF, defaults below) then drives the joint.
//   <plugin name="flippers" filename="libKenafJointCmd.so">
//     <p>400</p> <i>0</i> <d>2</d> <max_torque>40</max_torque>
//   </plugin>
// Built inside the Debian 11 root by tools/run-interop.
#include <string>

#include <gazebo/common/PID.hh>
#include <gazebo/common/Plugin.hh>
#include <gazebo/msgs/msgs.hh>
#include <gazebo/physics/physics.hh>
#include <gazebo/transport/transport.hh>

namespace kenaf {

class KenafJointCmd : public gazebo::ModelPlugin {
 public:
  void Load(gazebo::physics::ModelPtr model, sdf::ElementPtr sdf) override {
    model_ = model;
    auto get = [&sdf](const char *key, double dflt) {
      return sdf->HasElement(key) ? sdf->Get<double>(key) : dflt;
    };
    // the engine's servo gives its flippers 40 N m; a flipper pressed on
    // the ground carries part of the robot (about 7 N m at 15 degrees),
    // which these gains hold within a degree, damped, at a 1 ms step
    const double p = get("p", 400), i = get("i", 0), d = get("d", 2);
    const double tmax = get("max_torque", 40);
    auto ctl = model->GetJointController();
    for (const auto &j : model->GetJoints()) {
      if (j->DOF() != 1 || j->HasType(gazebo::physics::Base::FIXED_JOINT))
        continue;
      ctl->SetPositionPID(j->GetScopedName(), gazebo::common::PID(p, i, d, 0, 0, tmax, -tmax));
      ctl->SetPositionTarget(j->GetScopedName(), j->Position(0));
      ++joints_;
    }
    node_ = gazebo::transport::NodePtr(new gazebo::transport::Node());
    node_->Init(model->GetWorld()->Name());
    sub_ = node_->Subscribe("~/" + model->GetName() + "/joint_cmd", &KenafJointCmd::OnCmd, this);
    gzmsg << "KenafJointCmd: " << joints_ << " joints of " << model->GetName()
          << " on ~/" << model->GetName() << "/joint_cmd\n";
  }

 private:
  void OnCmd(ConstJointCmdPtr &msg) {
    if (!msg->has_position() || !msg->position().has_target())
      return;
    auto ctl = model_->GetJointController();
    const auto &joints = ctl->GetJoints();
    if (joints.find(msg->name()) == joints.end()) {
      gzwarn << "KenafJointCmd: no joint " << msg->name() << "\n";
      return;
    }
    ctl->SetPositionTarget(msg->name(), msg->position().target());
  }

  gazebo::physics::ModelPtr model_;
  gazebo::transport::NodePtr node_;
  gazebo::transport::SubscriberPtr sub_;
  int joints_ = 0;
};

GZ_REGISTER_MODEL_PLUGIN(KenafJointCmd)

}  // namespace kenaf
