# Turn schemas/NNN_*.sql into a C source with one string per schema version: entry v-1 is the
# migration NNN = v, whose number is the schema version (PRAGMA user_version) it brings a file to.
# A number without a file (a migration another branch adds) is a NULL entry: migrate() skips it.
# Two files of one number are an error. Inputs: SCHEMA_DIR, OUT.
file(GLOB files "${SCHEMA_DIR}/[0-9][0-9][0-9]_*.sql")
list(SORT files)
set(body "/* generated from the schemas/ migrations by db/embed_sql.cmake: do not edit */\n#include <stddef.h>\n")
set(list "const char *const schema_migrations[] = {\n")
set(last 0)
foreach(f ${files})
  get_filename_component(name "${f}" NAME)
  string(SUBSTRING "${name}" 0 3 digits)
  string(REGEX REPLACE "^0+" "" v "${digits}")   # decimal, not octal
  if(v STREQUAL "" OR NOT v GREATER last)
    message(FATAL_ERROR "schemas/${name}: migration number ${digits} is 000 or taken by another file "
                        "(each schema version has one migration)")
  endif()
  math(EXPR gap "${last} + 1")
  while(gap LESS v)
    string(APPEND list "\tNULL,   /* no migration ${gap} on this branch */\n")
    math(EXPR gap "${gap} + 1")
  endwhile()
  file(READ "${f}" hex HEX)
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," hex "${hex}")
  string(APPEND body "static const char m${v}[] = {${hex}0x00};\n")
  string(APPEND list "\tm${v},\n")
  set(last ${v})
endforeach()
string(APPEND list "\tNULL,\n};\nconst int schema_migration_count = ${last};\n")
file(WRITE "${OUT}.tmp" "${body}${list}")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
