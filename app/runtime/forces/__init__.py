"""The rig's loads: forces, torques, springs, joint loads, their attachment points and
proximities, and the engine that evaluates them between MuJoCo's steps.

Nothing is imported here: import the module you need."""
