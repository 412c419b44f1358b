/* Real USARSim lines, copied exactly with CR LF added, from captured
 * server output and from published clients and servers (the repositories
 * are listed in docs/usarsim.md, "Sources"). Client lines that are printf
 * formats in their source (C3-C5, C10-C12) are instantiated with sample
 * values; the format is kept. */
#ifndef TEST_USARSIM_REAL_LINES_H
#define TEST_USARSIM_REAL_LINES_H

#include <check.h>
#include <stdio.h>

#include "usarsim_codec.h"

/* Server -> client, captured: UT2004 (REAL_1-7, JJWTimmer/AP2DX
 * test/sensordata.txt) and UDK (REAL_12-22, the "real USARSim output
 * sample" in m-shimizu/RoboCupRescuePackage USARcommandSample.txt). */
#define REAL_1 "NFO {Gametype BotDeathMatch} {Level DM-USAR_yellow_250} {TimeLimit 0}\r\n"
#define REAL_2                                                                            \
    "SEN {Type Encoder} {Name ECLeft Tick 0} {Name ECRight Tick 0} {Name ECTilt Tick 0} " \
    "{Name ECPan Tick 0}\r\n"
#define REAL_4                                                                             \
    "SEN {Time 395.3833} {Type GroundTruth} {Name GroundTruth} {Location 4.50,1.90,1.85} " \
    "{Orientation 0.00,6.28,6.28}\r\n"
#define REAL_6                                                                                    \
    "MISSTA {Time 395.38} {Name CameraPanTilt} {Link 1} {Value 0.0000} {Torque -20.00} {Link 2} " \
    "{Value 0.0000} {Torque -20.00}\r\n"
#define REAL_7                                                                       \
    "STA {Type GroundVehicle} {Time 395.38} {FrontSteer 0.0000} {RearSteer 0.0000} " \
    "{LightToggle False} {LightIntensity 0} {Battery 1200} {View -1}\r\n"
#define REAL_12 "NFO {Gametype BotDeathMatch} {Level EmptyRoom} {TimeLimit 20}\r\n"
#define REAL_13                                                                        \
    "CONF {Name P3AT} {Type GroundVehicle} {SteeringType SkidSteered} {Mass 11.9000} " \
    "{MaxSpeed 1.2999} {MaxTorque 50000.0000} {MaxFrontSteer 0} {MaxRearSteer 0}\r\n"
#define REAL_14                                                                 \
    "GEO  {Name P3AT} {Type GroundVehicle} {Dimensions 0.2480,0.3600,0.0000} "  \
    "{COG 0.0000,0.0000,0.0000} {WheelRadius 0.0980} {WheelSeparation 0.3600} " \
    "{WheelBase 0.2480}\r\n"
#define REAL_16                                                          \
    "GEO {Type RangeScanner} {Name lms200} {Location 0.21,-0.00,-0.20} " \
    "{Orientation 0.00,-0.00,-0.00}{Mount P3AT}\r\n"
#define REAL_18                                                                     \
    "STA {Time 477.7582} {Battery 99999} {Type GroundVehicle} {LightToggle False} " \
    "{LightIntensity 100} {FrontSteer 0} {RearSteer 0}\r\n"
#define REAL_19                                                                              \
    "SEN {Time 477.7582} {Type GroundTruth} {Name GndTruth} {Location -0.000,-0.000,0.017} " \
    "{Orientation -0.000,0.000,0.000}\r\n"
#define REAL_20 "SEN {Time 477.7582} {Type Encoder} {Name W1} {Tick 0}\r\n"
#define REAL_21 "SEN {Time 477.7743} {Type Camera} \r\n"
#define REAL_22 \
    "SEN {Type INS} {Name InsTest} {Location 0.00,0.00,-0.20} {Orientation 0.00,0.00,0.00}\r\n"

/* Server -> client, from USARSim's sources and comments: a UT2004 STA
 * with flipper angles, UvA start poses, GPSSensor.uc, UT2004 item
 * GEO/CONF. */
#define REAL_STA_FLIPPERS                                                            \
    "STA {Type GroundVehicle} {Time 48.22} {FrontSteer 0.0000} {RearSteer 0.0000} "  \
    "{FRFlipper -0.0006} {FLFlipper -0.0005} {RRFlipper 0.0005} {RLFlipper 0.0006} " \
    "{LightToggle False} {LightIntensity 0} {Battery 1196} {View -1}\r\n"
#define REAL_POSES_UVA                                                             \
    "NFO {StartPoses 3} {BlueGoal -2.55,-0.00,-0.19 0.00,-0.03,-0.01 MiddleField " \
    "0.01,-0.00,-0.19 0.00,0.00,0.00 YellowGoal 2.57,-0.01,-0.19 0.00,0.00,3.13}\r\n"
#define REAL_GPS                                                                            \
    "SEN {Type GPS} {Name GPS1} {Latitude 47,40.3323,N} {Longitude 122,18.5977,W} {Fix 1} " \
    "{Satellites 8}\r\n"
#define REAL_GPS_UT "SEN {Type GPS} {Name GPS} {Fix 0} {Satellites 0}\r\n"
#define REAL_GEO_SONAR                                                      \
    "GEO {Type Sonar} {Name F2 Location 0.1850,-0.1150,0.0000 Orientation " \
    "0.0000,0.0000,-0.8727 Mount HARD}\r\n"
#define REAL_CONF_MISPKG                                                                  \
    "CONF {Type MisPkg} {Name TeleMaxArm} {Link 1} {JointType Revolute} {MaxSpeed 0.17} " \
    "{MaxTorque 300.00} {MinRange 1.00} {MaxRange 0.00}\r\n"

/* Client -> server, from published clients: AP2DX test.py (C1-C2),
 * ros-usarsim usarsimInf.cpp (C3-C5), USARcommandSample.txt (C6), UvA
 * UsarCommander StandardDriveActor.vb (C7-C9), the Player USARSim driver
 * (C10-C12). */
#define REAL_C1 "INIT {ClassName USARBot.P2DX} {Location 4.5,1.9,1.8} {Name R1}\r\n"
#define REAL_C2 "DRIVE {Left 1} {Right 1} {Normalized true}\r\n"
#define REAL_C3_WRITE \
    "GETSTARTPOSES\r\nINIT {Classname USARBot.Kenaf} {Name Kenaf1} {Start Point1}\r\n"
#define REAL_C3A "GETSTARTPOSES\r\n"
#define REAL_C3B "INIT {Classname USARBot.Kenaf} {Name Kenaf1} {Start Point1}\r\n"
#define REAL_C4 "Drive {Left 0.500000} {Right -0.500000}\r\n"
#define REAL_C5A "GETCONF {Type Robot} {Name R1}\r\n"
#define REAL_C5B "GETGEO {Type Robot} {Name R1}\r\n"
#define REAL_C6 "MULTIDRIVE {FRFlipper 0.78}{FLflipper 0.78}{RRFlipper 0.78}{RLflipper 0.78}\r\n"
#define REAL_C7 "MULTIDRIVE {FRFlipper -0.5} {FLFlipper -0.5} {RRFlipper 0} {RLFlipper 0}\r\n"
#define REAL_C8 "DRIVE {Flip true}\r\n"
#define REAL_C9 "MISPKG {Name CameraPanTilt} {Link 1} {Value 0} {Link 2} {Value 0.2}\r\n"
#define REAL_C10 "SET {Type Odometry} {Name Odometry} {Opcode RESET} \r\n"
#define REAL_C11 "DRIVE {Speed 1.000000} {FrontSteer 0.100000} {RearSteer 0.000000}\n\r"
#define REAL_C12                                                                     \
    "INIT {ClassName USARBot.P2DX} {Name R1} {Location 1.000000 2.000000 0.500000} " \
    "{Rotation 0.000000 0.000000 1.570000}\r\n"

/* Client -> server, more quirks: USARGazebo's INIT with {Battery},
 * upper-case keys, the decimal comma of a locale-blind client
 * (USARSim's LcmProxy), MULTIDRIVE from USARcommandSample.txt. */
#define REAL_INIT_GAZEBO                                                             \
    "INIT {ClassName USARBot.pioneer3at_with_sensors}{Name pioneer3at_with_sensors}" \
    "{Start Point1}{Battery 3600}\r\n"
#define REAL_DRIVE_UPPER "DRIVE {RIGHT 1.0} {LEFT 1.0}\r\n"
#define REAL_DRIVE_COMMA "DRIVE {Left 1,00} {Right 1,00}\r\n"
#define REAL_MULTIDRIVE_15 \
    "MULTIDRIVE {FRFlipper 1.5}{FLflipper 1.5}{RRFlipper 1.5}{RLflipper 1.5}\r\n"

/* Tokenizes into the file's line struct or fails the test. */
static struct kn_usar_line L;

static inline void tok_ok(const char *s)
{
    enum kn_usar_result r = kn_usar_tokenize(s, strlen(s), &L);
    ck_assert_msg(r == KN_USAR_OK, "tokenize \"%s\": %s", s, kn_usar_strerror(r));
}

#define ck_assert_view(v, lit)                                                           \
    do {                                                                                 \
        struct kn_usar_str v_ = (v);                                                     \
        ck_assert_msg(kn_usar_str_eq(v_, (lit)), "got \"%.*s\", want \"%s\"", (int)v_.n, \
                      v_.p ? v_.p : "", (lit));                                          \
    } while (0)

#define ck_assert_near(a, b)                                                                     \
    do {                                                                                         \
        double a_ = (a), b_ = (b);                                                               \
        ck_assert_msg(a_ == b_ || (a_ - b_ < 1e-12 && b_ - a_ < 1e-12), "got %.17g, want %.17g", \
                      a_, b_);                                                                   \
    } while (0)

#endif
