# At the skill's root, not under scripts/: never runnable.
print("should never run")
