"""The workspace for the front ends: its folders, one index object over them, the feedback desk."""
