/* The flipper assist: a step and stair climbing aid fed only with what a
 * real Kenaf's STATUS gives (body pitch and roll, flipper angles and
 * torques, belt speeds, optionally the distance the encoders counted),
 * called at the control rate, answering flipper set-points. Sans-I/O and
 * without terrain knowledge, so the engine's scenario runner and
 * kenaf-console run the same code (docs/engine.md, "The flipper assist").
 *
 * Its phases: approach with the front flippers raised; on front contact
 * (flipper torque or nose-up pitch) press the front flippers onto the top
 * and keep them pressed while the nose rises, the set-point following the
 * measured torque towards a pressing target; once the nose is up far
 * enough or the robot has driven far enough since the contact (the CoG
 * near the edge), lower the rear flippers to a world angle near straight
 * down to lift the body and push it over at the climb speed; once the
 * nose comes down again (or, on a low step, holds still), level all four
 * flippers. A nose pitched up past what the belts can hold on the edge
 * means the step is too high: it gives up and backs down. */
#ifndef KN_COMMON_ASSIST_H
#define KN_COMMON_ASSIST_H

#include <stddef.h>

/* Flipper order, as everywhere (KRP/1): front left, front right, rear
 * left, rear right. */
enum { KN_ASSIST_FL = 0, KN_ASSIST_FR, KN_ASSIST_RL, KN_ASSIST_RR, KN_ASSIST_NFLIP };

/* Every angle and threshold, with its default in kn_assist_defaults().
 * Angles in degrees, flipper angles as KRP/1 has them (0 in line with
 * the track, + lifts the tip), nose-up pitch positive. */
#define KN_ASSIST_MAX_PARAMS 32 /* room in a reader's key list */

struct kn_assist_params {
    double approach_deg;      /* front flippers while approaching */
    double rear_approach_deg; /* rear flippers while approaching */
    double contact_pitch_deg; /* nose up this much: front contact */
    double contact_torque_nm; /* or a front flipper pressed down this hard */
    double press_torque_nm;   /* the pressing target of the front flippers */
    double hold_belt_m_s;     /* belt limit from the contact until the front presses ... */
    double hold_world_deg;    /* ... pointing at most this much up in the world (on the top) */
    double press_gain;        /* set-point change per N*m of torque error [deg/(N*m*s)] */
    double press_lead_deg;    /* the set-point stays within this of the measured angle */
    double press_floor_deg;   /* front flippers not below this world angle (tips down) */
    double max_pitch_deg;     /* above this nose-up pitch the front flippers ease off */
    double rear_pitch_deg;    /* rear flippers go down at this nose-up pitch ... */
    double rear_dist_m;       /* ... or this far past the front contact (encoders) */
    double rear_world_deg;    /* the rear flippers' push, a world angle */
    double rear_tol_deg;      /* the push is done within this of rear_world_deg */
    double level_pitch_deg;   /* after the lift, nose up below this: on top ... */
    double level_drop_deg;    /* ... or, the push done, the nose down this much from its peak */
    double level_settle_s;    /* ... or the nose steady this long below rear_pitch_deg */
    double level_deg;         /* all flippers on top */
    double climb_belt_m_s;    /* belts from the rear push until level (0: the operator's) */
    double abort_pitch_deg;   /* nose up this much before the level: give up, back down ... */
    double abort_belt_m_s;    /* ... at this speed */
};

/* What a STATUS gives. pitch and roll in KRP/1's sense (positive pitch
 * lowers the nose), radians; torques N*m (has_torque 0 when the robot
 * does not measure them: capability bit 0); travelled_m the mean of both
 * belts' encoder distances, or NAN when unknown. */
struct kn_assist_input {
    double pitch_rad, roll_rad;
    double flip_rad[KN_ASSIST_NFLIP];
    double torque_nm[KN_ASSIST_NFLIP];
    int has_torque;
    double belt_m_s[2];
    double travelled_m;
    double dt_s; /* since the previous call; 0 on the first */
};

enum kn_assist_phase {
    KN_ASSIST_APPROACH, /* front raised, waiting for contact */
    KN_ASSIST_PRESS,    /* front pressed onto the top */
    KN_ASSIST_LIFT,     /* and the rear down */
    KN_ASSIST_LEVEL,    /* on top: all level; the assist is done */
    KN_ASSIST_BACK,     /* too high: backing down until the nose is down */
    KN_ASSIST_GAVE_UP,  /* backed down and stopped; the assist is done */
};

struct kn_assist_output {
    double flip_rad[KN_ASSIST_NFLIP]; /* set-points, all four every call */
    double belt_limit_m_s;            /* |belt speed| at most this; INFINITY: no limit */
    /* both belts at this speed (negative: backwards) instead of the
     * operator's; NAN: the operator's, within belt_limit_m_s. The climb
     * speed replaces a forward command (a caller standing still stays
     * still); backing down, when the assist gives up, applies whatever
     * the operator commands, until STOP or an e-stop ends the assist. */
    double belt_m_s;
    int phase_changed; /* this call entered a new phase */
};

struct kn_assist {
    struct kn_assist_params p;
    enum kn_assist_phase phase;
    double front_sp;     /* the front set-point while pressing [rad] */
    double contact_dist; /* travelled_m at the contact (NAN: unknown) */
    double peak_nose;    /* highest nose-up pitch since the contact [rad] */
    int holding;         /* the belts are held while the front flippers swing down */
    int rear_was_done;   /* the rear flippers have reached their push */
    double steady_nose;  /* the nose-up pitch the settling is measured from [rad] */
    double steady_s;     /* how long the nose has stayed within a degree of it */
};

/* One parameter of the table (for the scenario reader, documentation and
 * tests varying each): the name in a scenario's "controller" object, its
 * unit ("deg", "N*m", "m", ...), its default, its range, what it is. */
struct kn_assist_param_desc {
    const char *name;
    const char *unit;
    double def, lo, hi;
    const char *text;
};
extern const struct kn_assist_param_desc kn_assist_param_table[];
extern const int kn_assist_param_count;

void kn_assist_defaults(struct kn_assist_params *p);
/* 0, or -1 with the parameter named in err when a value is outside its
 * range or not finite. */
int kn_assist_check(const struct kn_assist_params *p, char *err, size_t errlen);
/* The field of parameter i (NULL outside the table). */
double *kn_assist_param(struct kn_assist_params *p, int i);

void kn_assist_init(struct kn_assist *a, const struct kn_assist_params *p);
void kn_assist_update(struct kn_assist *a, const struct kn_assist_input *in,
                      struct kn_assist_output *out);
/* "approach", "press", "lift", "level", "back down", "gave up" */
const char *kn_assist_phase_name(enum kn_assist_phase ph);

#endif
