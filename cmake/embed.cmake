# Turns the file IN into a C source OUT defining <VAR>_text (its bytes, NUL-terminated) and
# <VAR>_name (NAME: its path relative to the source tree).
file(READ ${IN} hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)" "\\1\n" bytes "${bytes}")
file(WRITE ${OUT} "/* Generated from ${IN} by cmake/embed.cmake; do not edit. */\n"
  "const char ${VAR}_name[] = \"${NAME}\";\n"
  "const char ${VAR}_text[] = {\n${bytes}0x00};\n")
