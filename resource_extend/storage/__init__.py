"""The storage resource plugin: volumes, disks and flat storage on a node."""
