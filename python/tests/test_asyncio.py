"""threadtime.asyncio: each task is charged the CPU of its own steps.

The truth is the kernel's clock of the loop's thread (time.thread_time_ns),
read by the test itself around the work inside each step. A fast-clock
interval may come out up to FAST_BOUND_NS short of a real interval inside
it (docs/fast-clock.md), so each step's figure is allowed that much below.
"""
import asyncio
import contextvars
import errno
import os
import queue
import shutil
import subprocess
import sys
import textwrap
import threading
import time
import traceback
import types
from pathlib import Path

import pytest
from starlette.applications import Starlette

import threadtime
import threadtime.asyncio as tta
from conftest import in_child, interpreters, probe
from cpu_burn import burn

BOUND = threadtime.FAST_BOUND_NS


def eager_loop():
    """asyncio's default loop with eager tasks (3.12+)."""
    loop = asyncio.new_event_loop()
    loop.set_task_factory(asyncio.eager_task_factory)
    return loop


def loop_factories():
    """asyncio's default loop, uvloop's, and (3.12+) the default one with
    eager tasks (on 3.11, test_eager_tasks_... runs a 3.12+ interpreter)."""
    import uvloop
    eager = [pytest.param(eager_loop, id="eager")] if sys.version_info >= (3, 12) else []
    return [pytest.param(asyncio.new_event_loop, id="asyncio"), pytest.param(uvloop.new_event_loop, id="uvloop"),
            *eager]


def run(main, loop_factory=asyncio.new_event_loop, install=True):
    """Runs main() on a fresh loop, with threadtime.asyncio installed first."""
    loop = loop_factory()
    try:
        if install:
            tta.install(loop)
        return loop.run_until_complete(main())
    finally:
        loop.close()


@pytest.mark.parametrize("loop_factory", loop_factories())
def test_a_sleeping_task_is_not_charged_for_a_burning_one(loop_factory):
    steps = 8

    async def burner() -> int:
        burned = 0
        for _ in range(steps):
            burned += burn(10_000_000)
            await asyncio.sleep(0)
        return burned

    async def sleeper(done: asyncio.Event) -> int:
        wakes = 0
        while not done.is_set():
            await asyncio.sleep(0.0005)
            wakes += 1
        return wakes

    async def main():
        done = asyncio.Event()
        s = asyncio.create_task(sleeper(done))
        thread0 = time.thread_time_ns()
        b = asyncio.create_task(burner())
        burned = await b
        done.set()
        wakes = await s
        return burned, wakes, time.thread_time_ns() - thread0, tta.task_cpu_ns(b), tta.task_cpu_ns(s)

    burned, wakes, thread, charged_b, charged_s = run(main, loop_factory)
    # What the loop's thread clock says over the sleeper's life: the burn.
    assert thread >= burned
    assert charged_b >= burned - (steps + 1) * BOUND
    assert charged_s < 0.05 * charged_b, (charged_s, charged_b, wakes)


@pytest.mark.parametrize("loop_factory", loop_factories())
def test_a_tasks_cpu_is_the_sum_of_its_steps(loop_factory):
    """Two tasks interleave, each burning in every step; each is charged its
    own burns, within the fast clock's bound per step, and never more than
    the thread's CPU less the other task's burns."""
    steps = 6

    async def worker(ns: int, seen: list[int]) -> None:
        for _ in range(steps):
            seen.append(burn(ns))
            await asyncio.sleep(0)
        seen.append(burn(ns))

    async def main():
        a_seen, b_seen = [], []
        thread0 = time.thread_time_ns()
        a = asyncio.create_task(worker(3_000_000, a_seen))
        b = asyncio.create_task(worker(5_000_000, b_seen))
        await asyncio.gather(a, b)
        thread = time.thread_time_ns() - thread0
        return thread, sum(a_seen), sum(b_seen), tta.task_cpu_ns(a), tta.task_cpu_ns(b)

    thread, a_burn, b_burn, a_cpu, b_cpu = run(main, loop_factory)
    n = steps + 1
    assert a_burn - n * BOUND <= a_cpu <= thread - b_burn + n * BOUND
    assert b_burn - n * BOUND <= b_cpu <= thread - a_burn + n * BOUND


def test_the_current_task_includes_its_step_in_progress():
    async def work():
        before = tta.task_cpu_ns()
        burned = burn(20_000_000)
        return before, burned, tta.task_cpu_ns()

    async def main():
        return await asyncio.create_task(work())

    before, burned, after = run(main)
    assert after - before >= burned - BOUND


def test_tasks_cpu_ns_lists_the_live_counted_tasks():
    async def main():
        gate = asyncio.Event()

        async def wait():
            burn(5_000_000)
            await gate.wait()

        tasks = [asyncio.create_task(wait()) for _ in range(3)]
        await asyncio.sleep(0)
        figures = tta.tasks_cpu_ns()
        gate.set()
        await asyncio.gather(*tasks)
        me = asyncio.current_task()
        return me, tasks, figures, tta.tasks_cpu_ns()

    me, tasks, figures, after = run(main)
    # run() installs before it makes main()'s task, which is counted too.
    assert set(figures) == {me, *tasks}
    assert all(figures[t] >= 5_000_000 - BOUND for t in tasks)
    assert set(after) == {me}


def test_the_task_keeps_what_users_read():
    seen = {}

    async def work(x):
        seen["current"] = asyncio.current_task()
        seen["all"] = asyncio.all_tasks()
        await asyncio.sleep(0)
        return x * 2

    async def main():
        coro = work(21)
        task = asyncio.create_task(coro, name="worker-1")
        assert task.get_coro() is coro
        assert task.get_name() == "worker-1"
        assert "work()" in repr(task) and "worker-1" in repr(task)
        unnamed = asyncio.create_task(asyncio.sleep(0))
        await unnamed
        result = await task
        return task, unnamed, result

    task, unnamed, result = run(main)
    assert result == 42
    assert isinstance(task, asyncio.Task)
    assert seen["current"] is task and task in seen["all"]
    # 3.13's create_task (3.13.0 and 3.13.5 alike) calls set_name(name) on any
    # factory's task, also for name=None, so there every factory's unnamed
    # task is named 'None'.
    if sys.version_info[:2] != (3, 13):
        assert unnamed.get_name().startswith("Task-")


def outcome(main, install: bool, loop_factory=asyncio.new_event_loop):
    """What a run shows a user: its result, or its exception's type, text and
    the function names of its traceback."""
    try:
        return ("result", run(main, loop_factory, install))
    except BaseException as e:  # noqa: BLE001 - compared below
        frames = [f.name for f in traceback.extract_tb(e.__traceback__)]
        return ("raised", type(e).__name__, str(e), frames[frames.index("main"):] if "main" in frames else frames)


async def raises_inside():
    await asyncio.sleep(0)
    raise ValueError("inner failure")


async def cancels_with_message():
    async def sleeper():
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            await asyncio.sleep(0)  # a step after the cancellation, counted too
            raise

    task = asyncio.create_task(sleeper())
    await asyncio.sleep(0)
    task.cancel("stop now")
    try:
        await task
    except asyncio.CancelledError as e:
        cancelling = task.cancelling() if sys.version_info >= (3, 11) else None  # new in 3.11
        return ("cancelled", task.cancelled(), e.args, cancelling)


async def gathers():
    async def part(i):
        await asyncio.sleep(0)
        if i == 3:
            raise KeyError(i)
        return i

    results = await asyncio.gather(*(part(i) for i in range(5)), return_exceptions=True)
    return [repr(r) for r in results]


async def task_group():
    async def part(i):
        await asyncio.sleep(0)
        if i % 2:
            raise ValueError(f"part {i}")
        return i

    try:
        async with asyncio.TaskGroup() as tg:
            for i in range(4):
                tg.create_task(part(i))
    except ExceptionGroup as eg:
        return sorted(str(e) for e in eg.exceptions)


async def raises_through_a_task():
    async def main():  # named for the traceback's start
        return await asyncio.create_task(raises_inside())
    return await main()


async def context_vars():
    var = contextvars.ContextVar("var", default="unset")
    var.set("parent")

    async def child():
        seen = var.get()
        var.set("child")
        await asyncio.sleep(0)
        return seen, var.get()

    inside = await asyncio.create_task(child())
    return inside, var.get()


@pytest.mark.parametrize("loop_factory", loop_factories())
@pytest.mark.parametrize("scenario", [raises_through_a_task, cancels_with_message, gathers, task_group,
                                      context_vars], ids=lambda f: f.__name__)
def test_behaviour_is_plain_asyncios(scenario, loop_factory):
    if scenario is task_group and not hasattr(asyncio, "TaskGroup"):
        pytest.skip("asyncio.TaskGroup is new in 3.11")
    plain = outcome(scenario, install=False, loop_factory=loop_factory)
    assert outcome(scenario, install=True, loop_factory=loop_factory) == plain


def test_a_cancelled_task_keeps_its_figure():
    async def main():
        async def sleeper():
            try:
                await asyncio.sleep(10)
            except asyncio.CancelledError:
                burned.append(burn(5_000_000))  # a step after the cancellation
                raise

        burned = []
        task = asyncio.create_task(sleeper())
        await asyncio.sleep(0)
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        return task, burned[0]

    task, burned = run(main)
    assert task.cancelled()
    assert tta.task_cpu_ns(task) >= burned - 2 * BOUND


def test_a_traceback_has_no_frame_of_threadtime():
    async def main():
        return await asyncio.create_task(raises_inside())

    with pytest.raises(ValueError) as info:
        run(main)
    files = [f.filename for f in traceback.extract_tb(info.value.__traceback__)]
    package = str(Path(threadtime.__file__).parent)
    assert not any(f.startswith(package) for f in files), files


def test_install_composes_with_a_factory_already_set():
    made = []

    def factory(loop, coro, **kwargs):
        task = asyncio.Task(coro, loop=loop, **kwargs)
        made.append(task)
        return task

    async def work():
        return burn(5_000_000)

    async def main():
        loop = asyncio.get_running_loop()
        loop.set_task_factory(factory)
        tta.install()
        tta.install()  # a second call changes nothing
        task = asyncio.create_task(work(), name="made-by-factory")
        burned = await task
        return task, burned

    task, burned = run(main, install=False)
    assert made == [task] and task.get_name() == "made-by-factory"
    assert tta.task_cpu_ns(task) >= burned - 2 * BOUND


def test_uninstall_restores_the_factory():
    def factory(loop, coro, **kwargs):
        return asyncio.Task(coro, loop=loop, **kwargs)

    async def main():
        loop = asyncio.get_running_loop()
        loop.set_task_factory(factory)
        tta.install()
        counted = asyncio.create_task(asyncio.sleep(0))
        tta.uninstall()
        plain = asyncio.create_task(asyncio.sleep(0))
        await asyncio.gather(counted, plain)
        return loop.get_task_factory(), counted, plain

    restored, counted, plain = run(main, install=False)
    assert restored is factory
    assert isinstance(tta.task_cpu_ns(counted), int)
    with pytest.raises(LookupError, match="not counted"):
        tta.task_cpu_ns(plain)


def test_errors_name_what_is_wrong():
    with pytest.raises(RuntimeError, match="without a loop"):
        tta.install()
    with pytest.raises(RuntimeError, match="outside a task"):
        tta.task_cpu_ns()

    async def main():
        with pytest.raises(TypeError, match="coroutine"):
            asyncio.get_running_loop().create_task(42)
        return True

    assert run(main)


def test_a_task_counted_before_fork_refuses_reads_in_the_child():
    async def main():
        task = asyncio.create_task(asyncio.sleep(0))
        await task
        return task

    task = run(main)

    def body() -> str:
        try:
            answer = f"answered {tta.task_cpu_ns(task)}"
        except OSError as e:
            answer = f"{e.errno} {'fork' in str(e)}"

        async def fresh():
            t = asyncio.create_task(asyncio.sleep(0))
            await t
            return tta.task_cpu_ns(t) >= 0

        return f"{answer};{run(fresh)}"

    assert in_child(body) == f"{errno.EINVAL} True;True"
    assert tta.task_cpu_ns(task) >= 0  # the parent still reads it


EAGER_CHILD = textwrap.dedent("""
    import asyncio, time
    import threadtime.asyncio as tta

    def burn(ns):
        t0 = time.thread_time_ns()
        while time.thread_time_ns() - t0 < ns:
            pass
        return time.thread_time_ns() - t0

    async def child(seen):
        seen.append(burn(20_000_000))   # the eager first step, inside main's
        await asyncio.sleep(0)
        seen.append(burn(5_000_000))

    async def parent():
        seen = []
        t = asyncio.create_task(child(seen))
        first = tta.task_cpu_ns()       # the parent's step so far, the child's step left out
        own = burn(10_000_000)
        await t
        return seen, own, first, tta.task_cpu_ns(), tta.task_cpu_ns(t)

    async def main():
        loop = asyncio.get_running_loop()
        loop.set_task_factory(asyncio.eager_task_factory)
        tta.install()
        p = asyncio.create_task(parent())
        return await p

    seen, own, first, mine, theirs = asyncio.run(main())
    print(*seen, own, first, mine, theirs)
""")


def eager_pythons() -> list[str]:
    """This interpreter if it is 3.12+, else the 3.12+ ones installed here."""
    if sys.version_info >= (3, 12):
        return [sys.executable]
    return [p for p in interpreters() if probe(p)[1:3] >= (3, 12)]


def run_eager(child: str, tmp_path: Path) -> list[list[int]]:
    """child's printed ints, from each 3.12+ interpreter installed here."""
    pythons = eager_pythons()
    if not pythons:
        pytest.skip("eager tasks need CPython 3.12+, and none is installed here")
    # The extension is abi3: the package as installed here loads on any 3.12+.
    package = Path(threadtime.__file__).parent
    shutil.copytree(package, tmp_path / "threadtime", ignore=shutil.ignore_patterns("__pycache__"),
                    dirs_exist_ok=True)
    outs = []
    for python in pythons:
        out = subprocess.run([python, "-c", child], capture_output=True, text=True,
                             env={**os.environ, "PYTHONPATH": str(tmp_path)}, cwd=tmp_path)
        assert out.returncode == 0, f"{python}: {out.stderr}"
        outs.append([int(x) for x in out.stdout.split()])
    return outs


def test_eager_tasks_are_counted_and_the_parent_is_not_charged_for_their_first_step(tmp_path):
    for out in run_eager(EAGER_CHILD, tmp_path):
        first_step, second_step, own, first, mine, theirs = out
        assert theirs >= first_step + second_step - 2 * BOUND
        # The child's first step ran inside the parent's: it is not the parent's.
        assert first < first_step - BOUND
        assert own - 2 * BOUND <= mine < own + first_step - 2 * BOUND


# A task that finishes inside its eager first step: the C Task then drops
# its coroutine (get_coro() answers None), and the figure must survive it.
EAGER_DONE_CHILD = textwrap.dedent("""
    import asyncio, time
    import threadtime.asyncio as tta

    async def child():
        t0 = time.thread_time_ns()
        while time.thread_time_ns() - t0 < 20_000_000:
            pass
        return time.thread_time_ns() - t0

    async def main():
        asyncio.get_running_loop().set_task_factory(asyncio.eager_task_factory)
        tta.install()
        t = asyncio.create_task(child())
        assert t.done(), "the task did not finish in its eager first step"
        return t.result(), tta.task_cpu_ns(t)

    print(*asyncio.run(main()))
""")


def test_a_task_that_finished_in_its_eager_first_step_keeps_its_figure(tmp_path):
    for burned, charged in run_eager(EAGER_DONE_CHILD, tmp_path):
        assert burned - 2 * BOUND <= charged


def test_the_lifespan_installs_on_the_servers_loop():
    app = Starlette(lifespan=tta.lifespan)

    async def main():
        loop = asyncio.get_running_loop()
        before = loop.get_task_factory()
        async with app.router.lifespan_context(app):
            request = asyncio.create_task(asyncio.sleep(0))
            await request
        return before, tta.task_cpu_ns(request)

    before, figure = run(main, install=False)
    assert before is None and figure >= 0


def test_a_missing_native_says_so(tmp_path):
    package = Path(threadtime.__file__).parent
    shutil.copytree(package, tmp_path / "threadtime",
                    ignore=shutil.ignore_patterns("__pycache__", "_core*.so"))
    out = subprocess.run([sys.executable, "-c", "import threadtime.asyncio"], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(tmp_path)}, cwd=tmp_path)
    assert out.returncode != 0
    last = out.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: threadtime's C extension (threadtime._core) did not load"), last
    assert "make python-install" in last


def test_loops_on_two_threads_each_count_their_own_tasks_while_another_thread_reads():
    """Two threads, each with its loop and two interleaved tasks; the main
    thread reads every task's figure as they run (on a free-threaded build,
    at the same time as the steps). Each figure only grows, and ends as the
    sum of its own task's burns."""
    steps, tasks_per_loop = 5, 2
    created: queue.Queue = queue.Queue()
    results = {}

    async def worker(ns: int, seen: list[int]) -> None:
        for _ in range(steps):
            seen.append(burn(ns))
            await asyncio.sleep(0)

    async def main(name: str):
        created_here = []
        thread0 = time.thread_time_ns()
        for i in range(tasks_per_loop):
            seen: list[int] = []
            t = asyncio.create_task(worker(2_000_000 * (i + 1), seen))
            created_here.append((t, seen))
            created.put(t)
        await asyncio.gather(*(t for t, _ in created_here))
        results[name] = (time.thread_time_ns() - thread0, created_here)

    threads = [threading.Thread(target=run, args=(lambda n=n: main(n),)) for n in ("a", "b")]
    for th in threads:
        th.start()
    tasks = [created.get(timeout=60) for _ in range(2 * tasks_per_loop)]
    last = {t: 0 for t in tasks}
    while any(th.is_alive() for th in threads):
        for t in tasks:
            now = tta.task_cpu_ns(t)
            assert now >= last[t]
            last[t] = now
    for th in threads:
        th.join()
    for thread_cpu, counted in results.values():
        burns = [sum(seen) for _, seen in counted]
        for (t, _), own in zip(counted, burns):
            assert own - steps * BOUND <= tta.task_cpu_ns(t) <= thread_cpu - (sum(burns) - own) + (steps + 1) * BOUND


def test_a_taskcoro_speaks_the_coroutine_protocol_and_counts_each_call():
    """send, throw, close and iteration reach the coroutine, and what it
    returns or raises comes back as from the coroutine itself; each call is
    a step counted."""
    from threadtime._core import TaskCoro

    @types.coroutine
    def suspend():
        return (yield "suspended")

    async def body(log):
        try:
            got = await suspend()
            log.append(burn(3_000_000))
            return (got, "done")          # a tuple, kept whole in StopIteration
        finally:
            log.append("finally")

    log: list = []
    w = TaskCoro(body(log))
    assert w.__await__() is w and iter(w) is w
    assert w.send(None) == "suspended"
    assert w.cr_code.co_name == "body"    # attributes it lacks are the coroutine's
    with pytest.raises(StopIteration) as stop:
        w.send("value")
    assert stop.value.value == ("value", "done")
    assert w.cpu_ns >= log[0] - 2 * BOUND

    thrown = TaskCoro(body([]))
    assert next(thrown) == "suspended"
    with pytest.raises(KeyError, match="boom"):
        thrown.throw(KeyError("boom"))

    closed_log: list = []
    closed = TaskCoro(body(closed_log))
    closed.send(None)
    closed.close()
    assert closed_log == ["finally"]
