# What the cross test scripts need before they start: each macro prints "SKIPPED: ..." (the
# tests' skip expression) and ends the calling script when it is missing.

# A program on PATH, found into `var`.
macro(apexnpu_require_program var name package)
  find_program(${var} ${name})
  if(NOT ${var})
    message("SKIPPED: ${name} is not installed (apt-get install ${package})")
    return()
  endif()
endmacro()

# A file the cross build makes, absent when that build was skipped.
macro(apexnpu_require_built path)
  if(NOT EXISTS ${path})
    message("SKIPPED: ${path} was not built (its cross compiler is missing)")
    return()
  endif()
endmacro()
