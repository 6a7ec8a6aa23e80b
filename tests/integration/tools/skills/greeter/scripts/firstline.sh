head -n 2 /skill/SKILL.md
ls /skill/scripts
