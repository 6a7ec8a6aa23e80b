# Tries to change its own skill folder; it only ever sees a copy.
echo changed > /skill/SKILL.md
rm -f /skill/scripts/greet.py
echo planted > /skill/scripts/planted.sh
head -n 1 /skill/SKILL.md
