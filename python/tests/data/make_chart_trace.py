"""Regenerates chart_nested.trace, the trace whose chart
python/tests/chart_golden.json pins (test_chart.py): two named threads,
each with 30 rounds of a CPU interval (10) holding a nested CPU interval
(11) and a nested plain one (12), and two events a round.
usage: python make_chart_trace.py  (then regenerate the golden file, see test_chart.py)"""
import threading
from pathlib import Path

import threadtime


def work(name: str) -> None:
    threadtime.log_thread_name(name)
    for i in range(30):
        with threadtime.interval(10, cpu=True):
            threadtime.event(1, i)
            with threadtime.interval(11, cpu=True):
                end = threadtime.total_ns() + 100_000
                while threadtime.total_ns() < end:
                    pass
            with threadtime.interval(12):
                pass
            threadtime.event(2, "step")


threadtime.start_log(ring_records=4096)
t = threading.Thread(target=work, args=("worker",))
t.start()
work("main")
t.join()
threadtime.stop_log()
threadtime.dump(Path(__file__).with_name("chart_nested.trace"))
