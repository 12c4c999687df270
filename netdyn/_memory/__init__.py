"""Memory: what a compiled gradient costs, what the devices have, batch sizes that fit."""
