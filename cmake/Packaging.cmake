# CPack configuration: Debian packages and a .tar.gz of the install tree.
#
#   cmake --preset ci -B build-pkg && cmake --build build-pkg
#   cpack --config build-pkg/CPackConfig.cmake -B build-pkg/packages
#
# Three install components become three Debian packages:
#   cli    -> `pipewright`         the command line, the examples, the docs
#                                  and the man page. No Qt and no LibTorch: it
#                                  validates, simulates and plans anywhere.
#   backend -> `pipewright-backend` (with PIPEWRIGHT_BUILD_BACKEND) the
#                                  LibTorch program under libexec/pipewright
#                                  that `pipewright run` and `profile` execute.
#   studio -> `pipewright-studio`  the Qt desktop app with its desktop entry,
#                                  AppStream metainfo, icons and MIME type.
#                                  Depends on the exact same `pipewright`,
#                                  whose `pipewright run` its Run panel starts
#                                  and whose examples it opens.
#   python -> `python3-pipewright` (with PIPEWRIGHT_BUILD_PYTHON) `import
#                                  pipewright` for Debian's python3, in
#                                  /usr/lib/python3/dist-packages. Depends on
#                                  the same `pipewright`, whose program
#                                  `pipewright.run()` starts.
# The .tar.gz holds every component in one relocatable tree (bin/, share/,
# and lib/python3/dist-packages/ for the Python module): the programs find
# their examples relative to their own location.
#
# Runtime dependencies are not listed by hand: dpkg-shlibdeps (from
# dpkg-dev) reads the ELF files and maps every shared library to the Debian
# package that ships it (Qt6, QCustomPlot-qt6, LibTorch, Gloo, libstdc++...).

# Debian's Maintainer field needs a name and an address.
set(PIPEWRIGHT_PACKAGE_MAINTAINER "Pipewright developers <maintainers@pipewright.invalid>"
    CACHE STRING "Maintainer of the Debian packages (\"Name <address>\")")

set(CPACK_PACKAGE_NAME pipewright)
set(CPACK_PACKAGE_VENDOR "Pipewright developers")
set(CPACK_PACKAGE_CONTACT "${PIPEWRIGHT_PACKAGE_MAINTAINER}")
set(CPACK_PACKAGE_HOMEPAGE_URL "${PROJECT_HOMEPAGE_URL}")
# Each Debian package below has its own synopsis (the first line of its
# description). CPackDeb prepends CPACK_PACKAGE_DESCRIPTION_SUMMARY to every
# component's description unless the summary is CPack's own default, so keep
# that default here.
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${CMAKE_PROJECT_NAME} built using CMake")
set(CPACK_PACKAGE_INSTALL_DIRECTORY pipewright)
set(CPACK_GENERATOR DEB TGZ)
# Debian ships stripped programs; it also keeps the packages small and the
# package test fast (the RelWithDebInfo backend carries ~100 MB of DWARF).
set(CPACK_STRIP_FILES ON)
set(CPACK_VERBATIM_VARIABLES ON)

# Components. Anything installed without one of these components (a
# third-party install() rule, say) stays out of the packages.
set(CPACK_COMPONENTS_ALL cli)
if(PIPEWRIGHT_BUILD_BACKEND)
  list(APPEND CPACK_COMPONENTS_ALL backend)
endif()
if(PIPEWRIGHT_BUILD_GUI)
  list(APPEND CPACK_COMPONENTS_ALL studio)
endif()
if(PIPEWRIGHT_BUILD_PYTHON)
  list(APPEND CPACK_COMPONENTS_ALL python)
endif()
set(CPACK_COMPONENT_CLI_DISPLAY_NAME "Pipewright command line")
set(CPACK_COMPONENT_STUDIO_DISPLAY_NAME "Pipewright Studio")
set(CPACK_COMPONENT_BACKEND_DISPLAY_NAME "Pipewright real runs (LibTorch)")
set(CPACK_COMPONENT_BACKEND_DEPENDS cli)
set(CPACK_COMPONENT_STUDIO_DEPENDS cli)
set(CPACK_COMPONENT_PYTHON_DISPLAY_NAME "Pipewright for Python 3")
set(CPACK_COMPONENT_PYTHON_DEPENDS cli)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_ARCHIVE_COMPONENT_INSTALL OFF)

# Debian packages: <name>_<version>-<release>_<arch>.deb
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
# Turns CPACK_COMPONENT_*_DEPENDS into "pipewright (= <version>-1)".
set(CPACK_DEBIAN_ENABLE_COMPONENT_DEPENDS ON)

set(CPACK_DEBIAN_CLI_PACKAGE_NAME pipewright)
set(CPACK_DEBIAN_CLI_DESCRIPTION
    "plan, simulate and run pipeline model-parallel training
Pipewright lays a model's layers onto a cluster of nodes, containers and
devices, times a pipeline schedule (naive, GPipe, 1F1B, interleaved 1F1B,
zero-bubble) against a cost model and reports the bubbles, throughput and
memory of every device; its planner searches for a fast placement that fits.
Schedules import and export as PyTorch's CSV, timelines as Chrome traces.

This package holds the `pipewright` command line, example projects and the
documentation.")
if(PIPEWRIGHT_BUILD_BACKEND)
  string(APPEND CPACK_DEBIAN_CLI_DESCRIPTION
         "\n`pipewright run` and `pipewright profile` need the pipewright-backend"
         "\npackage.")
  set(CPACK_DEBIAN_CLI_PACKAGE_RECOMMENDS pipewright-backend)

  set(CPACK_DEBIAN_BACKEND_PACKAGE_NAME pipewright-backend)
  set(CPACK_DEBIAN_BACKEND_DESCRIPTION
      "run planned pipelines for real with LibTorch
This package lets `pipewright run` train a project's pipeline for real, one
process per pipeline rank over Gloo (or NCCL on GPUs), measuring every
action, and `pipewright profile` measure each layer's cost on this machine.
It holds the LibTorch program that the `pipewright` command line starts.")
  # LibTorch falls back to the reference BLAS otherwise, ~40x slower.
  set(CPACK_DEBIAN_BACKEND_PACKAGE_RECOMMENDS "libopenblas0-openmp | libopenblas0")
endif()

set(CPACK_DEBIAN_STUDIO_PACKAGE_NAME pipewright-studio)
# Plugins are loaded at run time, so dpkg-shlibdeps cannot see them: the SVG
# window icon needs Qt's SVG icon engine and image format (libqt6svg6); the
# X11 platform plugin ships in libqt6gui6, the Wayland one in qt6-wayland.
set(CPACK_DEBIAN_STUDIO_PACKAGE_DEPENDS libqt6svg6)
set(CPACK_DEBIAN_STUDIO_PACKAGE_RECOMMENDS qt6-wayland)
set(CPACK_DEBIAN_STUDIO_DESCRIPTION
    "desktop app to plan and simulate pipeline model-parallel training
Pipewright Studio builds a model out of layers, lays it onto a cluster and
shows the predicted timeline of every device for each pipeline schedule,
with bubbles, throughput and memory per stage. Real runs start the
`pipewright` command line, and the measured timeline lands next to the
simulated one.")

if(PIPEWRIGHT_BUILD_PYTHON)
  set(CPACK_DEBIAN_PYTHON_PACKAGE_NAME python3-pipewright)
  set(CPACK_DEBIAN_PYTHON_PACKAGE_SECTION python)
  # The extension is built for one Python (its ABI tag names it), so the
  # package holds for that version only, as dh_python3 would write it.
  set(_python "python3 (>= ${Python3_VERSION_MAJOR}.${Python3_VERSION_MINOR}~)")
  math(EXPR _next_minor "${Python3_VERSION_MINOR} + 1")
  set(CPACK_DEBIAN_PYTHON_PACKAGE_DEPENDS
      "${_python}, python3 (<< ${Python3_VERSION_MAJOR}.${_next_minor})")
  # result.to_pandas() and result.plot() need them; the rest does not.
  set(CPACK_DEBIAN_PYTHON_PACKAGE_SUGGESTS "python3-matplotlib, python3-pandas")
  # Byte-compiled on installation and the caches removed on removal, as
  # dh_python3's scripts do (py3compile and py3clean come with python3).
  set(CPACK_DEBIAN_PYTHON_PACKAGE_CONTROL_EXTRA
      "${PROJECT_SOURCE_DIR}/python/debian/postinst;${PROJECT_SOURCE_DIR}/python/debian/prerm")
  set(CPACK_DEBIAN_PYTHON_DESCRIPTION
      "plan and simulate pipeline model-parallel training from Python
This package holds the Python 3 module `pipewright`: projects loaded and
edited as objects, simulations, plans and schedule comparisons computed in
process (a sweep over thousands of layouts is a Python loop), schedules as
PyTorch's action lists and CSV, and results as tables, pandas DataFrames and
matplotlib timelines in notebooks. It links neither Torch nor Qt; real runs
(`pipewright.run()`) start the `pipewright` command line.")
endif()

include(CPack)
