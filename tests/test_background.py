"""gpubook.background: TorchInductor's CPU checks, started early: same answers."""

import pytest

from gpubook import background


def test_checks_give_the_answers_the_compiler_finds():
    checks = background.start_vec_isa_checks()
    assert checks.wait() == len(checks.threads) >= 0
    from torch._inductor import cpu_vec_isa

    for thread in checks.threads:
        assert not thread.is_alive()
    assert cpu_vec_isa.pick_vec_isa() is not None  # the compiler's own pick still works


def test_another_torch_starts_nothing(monkeypatch):
    def missing():
        raise AttributeError("no x86_isa_checker in this torch")

    monkeypatch.setattr(background, "_candidates", missing)
    checks = background.start_vec_isa_checks()
    assert checks.threads == [] and checks.wait() == 0


@pytest.mark.parametrize("machine", ["arm64", "aarch64"])
def test_other_architectures_start_nothing(monkeypatch, machine):
    import platform

    monkeypatch.setattr(platform, "machine", lambda: machine)
    assert background._candidates() == []


def test_run_waits_and_returns_its_seconds(monkeypatch):
    started = []

    def fake_check(isa):
        import time

        time.sleep(0.05)
        started.append(isa)

    monkeypatch.setattr(background, "_candidates", lambda: ["a", "b"])
    monkeypatch.setattr(background, "_check", fake_check)
    seconds = background.run_vec_isa_checks()
    assert sorted(started) == ["a", "b"]  # both ran, and had finished on return
    assert 0.05 <= seconds < 5.0


def test_run_with_nothing_to_check_is_quick(monkeypatch):
    monkeypatch.setattr(background, "_candidates", lambda: [])
    assert background.run_vec_isa_checks() < 1.0


class _FakeIsa:
    def __init__(self, answers):
        self.answers, self.asked = list(answers), 0


def _fake_build(isa, code):
    isa.asked += 1
    return isa.answers.pop(0)


def test_a_recorded_success_skips_the_probe(tmp_path):
    marker = tmp_path / "probe.cpp.gpubook_load_ok"
    check = background._recording(_fake_build, lambda isa, code: str(marker))
    first, later = _FakeIsa([True]), _FakeIsa([])
    assert check(first, "code") is True and first.asked == 1 and marker.exists()
    assert check(later, "code") is True and later.asked == 0  # another process's view


def test_a_failed_probe_records_nothing_and_runs_again(tmp_path):
    marker = tmp_path / "probe.cpp.gpubook_load_ok"
    check = background._recording(_fake_build, lambda isa, code: str(marker))
    isa = _FakeIsa([False, False])
    assert check(isa, "code") is False and not marker.exists()
    assert check(isa, "code") is False and isa.asked == 2


def test_without_a_marker_name_the_probe_runs_as_before():
    def no_name(isa, code):
        raise KeyError("private module changed")

    check = background._recording(_fake_build, no_name)
    isa = _FakeIsa([True])
    assert check(isa, "code") is True and isa.asked == 1


def test_an_unwritable_marker_keeps_the_answer(tmp_path):
    marker = tmp_path / "missing-folder" / "probe.cpp.gpubook_load_ok"
    check = background._recording(_fake_build, lambda isa, code: str(marker))
    assert check(_FakeIsa([True]), "code") is True and not marker.exists()


def test_installing_on_this_torch_is_safe_and_idempotent():
    import inspect

    from torch._inductor import cpu_vec_isa

    source = inspect.getsource(cpu_vec_isa.VecISA.check_build)
    before = cpu_vec_isa.VecISA.check_build
    installed = background.record_successful_checks()
    try:
        # a torch that keeps the answer itself (2.14.1: '.load_ok') is left alone
        assert installed is ("load_ok" not in source)
        assert background.record_successful_checks() is installed
        again = cpu_vec_isa.VecISA.check_build
        assert (again is before) is (not installed)
    finally:
        cpu_vec_isa.VecISA.check_build = before


def test_installed_on_a_torch_like_2_11_the_marker_sits_on_torchs_own_file(
    monkeypatch, tmp_path
):
    from torch._inductor import codecache, cpu_vec_isa

    written, built = [], []

    def fake_write(code, ext, extra=""):
        written.append((code, ext, extra))
        path = tmp_path / f"{abs(hash((code, extra)))}.{ext}"
        path.write_text(code)
        return "key", str(path)

    def check_build_2_11(self, code):  # stands in for torch 2.11's own
        key, path = codecache.write(
            code,
            "cpp",
            extra=cpu_vec_isa._get_isa_dry_compile_fingerprint(self._arch_flags),
        )
        built.append(path)
        return True

    monkeypatch.setattr(codecache, "write", fake_write)
    monkeypatch.setattr(
        cpu_vec_isa, "_get_isa_dry_compile_fingerprint", lambda flags: f"cc={flags}"
    )
    monkeypatch.setattr(cpu_vec_isa.VecISA, "check_build", check_build_2_11)
    assert background.record_successful_checks() is True
    isa = type("Isa", (), {"_arch_flags": "-mavx2"})()
    check = cpu_vec_isa.VecISA.check_build
    assert check(isa, "probe") is True and len(built) == 1
    assert check(isa, "probe") is True and len(built) == 1  # the marker answered
    assert set(written) == {("probe", "cpp", "cc=-mavx2")}  # one key for both
    assert (
        tmp_path / f"{abs(hash(('probe', 'cc=-mavx2')))}.cpp.gpubook_load_ok"
    ).exists()
    other = type("Isa", (), {"_arch_flags": "-mavx512f"})()
    assert check(other, "probe") is True and len(built) == 2  # other flags: own probe
