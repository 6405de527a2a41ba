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
