# cmake -DIN=FILE -DOUT=FILE.c -DSYMBOL=NAME -P embed_file.cmake
# Writes FILE's bytes as `const char NAME[]` (NUL-terminated) and `const size_t NAME_len`, so the
# binary carries the file without a copy of it in the source tree.  Bytes, not a string literal:
# no escaping rules to get wrong and no compiler limit on literal length.
file(READ ${IN} hex HEX)
string(LENGTH "${hex}" n)
math(EXPR n "${n} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
# 16 bytes a line keeps the generated file readable in a diff or a debugger
string(REPEAT "0x..," 16 line)
string(REGEX REPLACE "(${line})" "\\1\n    " bytes "${bytes}")
file(WRITE ${OUT}.tmp "/* GENERATED at build time from ${IN} by cmake/embed_file.cmake: do not edit. */\n"
     "#include <stddef.h>\n\nconst char ${SYMBOL}[] = {\n    ${bytes}0x00};\n"
     "const size_t ${SYMBOL}_len = ${n};\n")
file(RENAME ${OUT}.tmp ${OUT})
