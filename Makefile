# graphsnap -- plain Makefile.
#   make            library (static + shared), CLI, tools
#   make test       build and run the test suite (ends with "N passed, N failed")
#   make asan/ubsan test suite under AddressSanitizer / UndefinedBehaviorSanitizer
#   make tsan       test suite under ThreadSanitizer (small sizes; JOBS as for valgrind)
#   make valgrind   test suite under valgrind memcheck (JOBS=N programs at once, default nproc)
#   make headertest graphsnap.h as C99 -pedantic -Werror and as C++
#   make install    PREFIX=/usr/local DESTDIR=
#   make docs       regenerate docs/cli.md's reference from the --help texts
#   make bench      benchmark programs (bench/)
#   make install-python  the Python package (python/graphsnap) into PYSITE, after `make install`
VMAJOR := $(shell sed -n 's/^\#define GSNAP_VERSION_MAJOR \([0-9]*\)/\1/p' include/graphsnap.h)
VMINOR := $(shell sed -n 's/^\#define GSNAP_VERSION_MINOR \([0-9]*\)/\1/p' include/graphsnap.h)
VPATCH := $(shell sed -n 's/^\#define GSNAP_VERSION_PATCH \([0-9]*\)/\1/p' include/graphsnap.h)
VERSION := $(VMAJOR).$(VMINOR).$(VPATCH)

PREFIX ?= /usr/local
LIBDIR ?= $(PREFIX)/lib
INCDIR ?= $(PREFIX)/include
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man
DESTDIR ?=

CC ?= cc
BUILD ?= build
OPT ?= -O2 -g
WERROR ?=
CFLAGS ?= $(OPT)
ALLCFLAGS = -std=c11 -D_GNU_SOURCE -Wall -Wextra $(WERROR) -fPIC -pthread -Iinclude -I. $(CFLAGS) $(SANFLAGS)
LDLIBS = -llmdb -luring -lxxhash -lpthread -lm
LDFLAGS += $(SANFLAGS)

# CUDA staging (sampler/staging_cuda.c) loads libcudart at run time with
# dlopen: the build needs neither the toolkit nor its headers, the shared
# library has no libcudart dependency (tests/test_nocudart.c checks ldd), and
# staging uses host buffers where no runtime or no device is found.
# CUDA_HOME/lib64 is the last place searched (after the loader's own path);
# GSNAP_NO_CUDA=1 compiles the CUDA path out (sanitizer builds).
CUDA_HOME ?= /usr/local/cuda
ALLCFLAGS += -DGSNAP_CUDA_LIBDIR='"$(CUDA_HOME)/lib64"'
ifneq ($(GSNAP_NO_CUDA),)
  ALLCFLAGS += -DGSNAP_NO_CUDA
endif
LDLIBS += -ldl

# Library folders, lowest layer first: common (errors, codecs, helpers every
# module uses) -> store, features, ingest -> snapshot -> sampler -> staging.
LIB_DIRS := common store features ingest snapshot sampler staging
LIB_SRC := $(wildcard $(LIB_DIRS:%=%/*.c))
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/%.o)
CLI_SRC := $(wildcard cli/*.c)
CLI_OBJ := $(CLI_SRC:%.c=$(BUILD)/%.o)
TEST_SRC := $(wildcard tests/test_*.c)
TEST_BIN := $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)
TEST_UTIL := $(wildcard tests/util/*.c)
TEST_UTIL_OBJ := $(TEST_UTIL:%.c=$(BUILD)/%.o)
BENCH_SRC := $(wildcard bench/*.c)
BENCH_BIN := $(BENCH_SRC:bench/%.c=$(BUILD)/bench/%)
TOOL_SRC := $(wildcard scripts/*.c)
TOOL_BIN := $(TOOL_SRC:scripts/%.c=$(BUILD)/tools/%)

STATIC := $(BUILD)/libgraphsnap.a
SONAME := libgraphsnap.so.$(VMAJOR)
SHARED := $(BUILD)/libgraphsnap.so.$(VERSION)
CLI := $(BUILD)/graphsnap
MAN := $(BUILD)/graphsnap.1

.PHONY: all lib cli tools man docs test asan ubsan tsan valgrind headertest install uninstall bench clean fuzz install-python
all: lib cli tools man

lib: $(STATIC) $(SHARED)
cli: $(CLI)
man: $(MAN)
tools: $(TOOL_BIN)

$(BUILD)/%.o: %.c $(wildcard include/*.h */*.h)
	@mkdir -p $(dir $@)
	$(CC) $(ALLCFLAGS) -c $< -o $@

$(STATIC): $(LIB_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

# The shared library exports exactly the functions declared in graphsnap.h:
# the version script is generated from the preprocessed header (comments
# gone, so names in prose do not count) and hides every other symbol,
# including the modules' gsnap_*__* internals. The static library keeps them
# (tests, fuzz targets and benchmarks link it). tests/test_exports.c checks.
EXPORTS := $(BUILD)/graphsnap.map
$(EXPORTS): include/graphsnap.h
	@mkdir -p $(dir $@)
	{ echo '{'; echo '  global:'; \
	  $(CC) -E -P -Iinclude $< | tr '\n' ' ' | grep -oE '\bgsnap_[A-Za-z0-9_]+[[:space:]]*\(' | \
	  sed -e 's/[[:space:]]*($$/;/' -e 's/^/    /' | sort -u; \
	  echo '  local: *;'; echo '};'; } > $@

$(SHARED): $(LIB_OBJ) $(EXPORTS)
	$(CC) -shared -Wl,-soname,$(SONAME) -Wl,--version-script=$(EXPORTS) -o $@ $(LIB_OBJ) $(LDFLAGS) $(LDLIBS)
	ln -sf libgraphsnap.so.$(VERSION) $(BUILD)/$(SONAME)
	ln -sf $(SONAME) $(BUILD)/libgraphsnap.so

$(CLI): $(CLI_OBJ) $(STATIC)
	$(CC) -o $@ $(CLI_OBJ) $(STATIC) $(LDFLAGS) $(LDLIBS)

# The man page is generated from the --help texts by the binary itself
# (cli/doc.c), so it always matches the commands and options built.
$(MAN): $(CLI)
	$(CLI) help --man > $@.tmp && mv $@.tmp $@

# docs/cli.md's reference part, from the same texts (tests/test_cli_docs.c
# fails when it is out of date). One command after adding or changing a command.
docs: $(CLI)
	sh scripts/cli_docs.sh $(CLI) docs/cli.md

$(BUILD)/tests/%: tests/%.c $(TEST_UTIL_OBJ) $(STATIC) $(wildcard tests/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(ALLCFLAGS) -Itests -o $@ $< $(TEST_UTIL_OBJ) $(STATIC) $(LDFLAGS) $(LDLIBS)

$(BUILD)/tools/%: scripts/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ALLCFLAGS) -o $@ $< $(LDFLAGS) -lm

$(BUILD)/bench/%: bench/%.c $(STATIC)
	@mkdir -p $(dir $@)
	$(CC) $(ALLCFLAGS) -o $@ $< $(STATIC) $(LDFLAGS) $(LDLIBS) $(BENCH_LIBS_$*)

# Peers for the store benchmark (Debian: libsqlite3-dev, librocksdb-dev).
BENCH_LIBS_bench_store = -lsqlite3 -lrocksdb

bench: $(BENCH_BIN) $(CLI) $(TOOL_BIN)

test: all $(TEST_BIN) headertest
	@BUILD=$(BUILD) sh tests/run.sh $(TEST_BIN)

asan:
	$(MAKE) BUILD=build-asan OPT="-O1 -g -fno-omit-frame-pointer" SANFLAGS="-fsanitize=address,undefined -fno-sanitize-recover=undefined" GSNAP_NO_CUDA=1 test

ubsan:
	$(MAKE) BUILD=build-ubsan OPT="-O1 -g" SANFLAGS="-fsanitize=undefined -fno-sanitize-recover=undefined" GSNAP_NO_CUDA=1 test

# GSNAP_TEST_SMALL=1: the tests' randomized work shrunk, as under valgrind.
tsan:
	GSNAP_TEST_SMALL=1 JOBS=$${JOBS:-$$(nproc)} $(MAKE) BUILD=build-tsan OPT="-O1 -g" SANFLAGS="-fsanitize=thread" GSNAP_NO_CUDA=1 test

valgrind:
	$(MAKE) BUILD=build-vg OPT="-O1 -g" GSNAP_NO_CUDA=1 all $(patsubst $(BUILD)/%,build-vg/%,$(TEST_BIN))
	@GSNAP_VALGRIND=1 BUILD=build-vg JOBS=$${JOBS:-$$(nproc)} sh tests/run.sh $(patsubst $(BUILD)/%,build-vg/%,$(TEST_BIN))

headertest:
	@mkdir -p $(BUILD)
	printf '#include "graphsnap.h"\nint main(void){return gsnap_version_number() < 0;}\n' > $(BUILD)/ht.c
	$(CC) -std=c99 -pedantic -Wall -Wextra -Werror -Iinclude -fsyntax-only $(BUILD)/ht.c
	printf '#include "graphsnap.h"\nint main(){return gsnap_version_number() < 0;}\n' > $(BUILD)/ht.cc
	c++ -std=c++11 -pedantic -Wall -Wextra -Werror -Iinclude -fsyntax-only $(BUILD)/ht.cc

# Regenerated on every install (FORCE): PREFIX/LIBDIR/INCDIR may differ per call.
# Libs carries -Wl,-rpath,LIBDIR so that a program linked through pkg-config
# runs without LD_LIBRARY_PATH or ldconfig; not for the system's own library
# directories (where the loader looks anyway), and `make install PC_RPATH=`
# leaves it out (then: LD_LIBRARY_PATH=LIBDIR, or ldconfig).
SYSTEM_LIBDIRS := /lib /lib64 /usr/lib /usr/lib64 $(addprefix /usr/lib/,$(shell $(CC) -print-multiarch 2>/dev/null))
PC_RPATH ?= $(if $(filter $(SYSTEM_LIBDIRS),$(LIBDIR)),,-Wl,-rpath,$${libdir} )
$(BUILD)/graphsnap.pc: graphsnap.pc.in include/graphsnap.h FORCE
	@mkdir -p $(BUILD)
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@LIBDIR@|$(LIBDIR)|g' -e 's|@INCDIR@|$(INCDIR)|g' \
	    -e 's|@VERSION@|$(VERSION)|g' -e 's|@LIBS_PRIVATE@|$(LDLIBS)|g' -e 's|@RPATH@|$(PC_RPATH)|g' $< > $@

FORCE:

install: all $(BUILD)/graphsnap.pc
	install -d $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCDIR) $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1
	install -m 644 include/graphsnap.h $(DESTDIR)$(INCDIR)/
	install -m 644 $(STATIC) $(DESTDIR)$(LIBDIR)/
	install -m 755 $(SHARED) $(DESTDIR)$(LIBDIR)/
	ln -sf libgraphsnap.so.$(VERSION) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libgraphsnap.so
	install -m 644 $(BUILD)/graphsnap.pc $(DESTDIR)$(LIBDIR)/pkgconfig/
	install -m 755 $(CLI) $(DESTDIR)$(BINDIR)/
	install -m 644 $(MAN) $(DESTDIR)$(MANDIR)/man1/

# Python package (docs/python.md): pure Python over libgraphsnap.so (ctypes),
# copied into the interpreter's first site directory (Debian's python3:
# /usr/local/lib/python3.X/dist-packages); _install.py records where the
# library was installed so that the package finds it without ldconfig.
PYTHON ?= $(firstword $(wildcard /usr/bin/python3) python3)
PYSITE ?= $(shell $(PYTHON) -c 'import site; print(site.getsitepackages()[0])')
install-python: install
	install -d $(DESTDIR)$(PYSITE)/graphsnap
	install -m 644 python/graphsnap/*.py $(DESTDIR)$(PYSITE)/graphsnap/
	printf 'LIBRARY = "%s"\n' "$(LIBDIR)/$(SONAME)" > $(DESTDIR)$(PYSITE)/graphsnap/_install.py

uninstall:
	rm -f $(DESTDIR)$(INCDIR)/graphsnap.h $(DESTDIR)$(LIBDIR)/libgraphsnap.* \
	      $(DESTDIR)$(LIBDIR)/pkgconfig/graphsnap.pc $(DESTDIR)$(BINDIR)/graphsnap \
	      $(DESTDIR)$(MANDIR)/man1/graphsnap.1
	rm -rf $(DESTDIR)$(PYSITE)/graphsnap

clean:
	rm -rf build build-asan build-ubsan build-tsan build-vg build-fuzz

# ---- reliability: libFuzzer targets (fuzz/, docs/reliability.md) ----------
# `make fuzz` builds the library with clang, ASan, UBSan and coverage into
# build-fuzz/ and links one libFuzzer binary per fuzz/fuzz_*.c:
# build-fuzz/fuzz/fuzz_<name>. fuzz/run.sh runs them (short or long).
FUZZ_SRC := $(wildcard fuzz/fuzz_*.c)
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=undefined
fuzz:
	$(MAKE) BUILD=build-fuzz CC=clang OPT="-O1 -g -fno-omit-frame-pointer" \
	    SANFLAGS="$(FUZZ_SAN) -fsanitize=fuzzer-no-link" GSNAP_NO_CUDA=1 fuzz-bins

.PHONY: fuzz-bins
fuzz-bins: $(FUZZ_SRC:fuzz/%.c=$(BUILD)/fuzz/%)

$(BUILD)/fuzz/%: fuzz/%.c $(STATIC)
	@mkdir -p $(dir $@)
	$(CC) $(ALLCFLAGS) -fsanitize=fuzzer -o $@ $< $(STATIC) $(LDFLAGS) $(LDLIBS)

# The reliability tests include tests/crash/crash_lib.h and tests/soak/soak.c.
$(addprefix $(BUILD)/tests/,test_crash_short test_enospc test_eacces test_soak_short crash/crash soak/soak): \
    $(wildcard tests/crash/*.h tests/soak/*.c)
