// The trace of issue 28's count: 20 virtual threads each call a probed
// method 10 times, and it sleeps 1 ms inside, so most calls unmount and
// many end on another carrier. make_java_vthreads_trace.sh runs it with
// -javaagent:threadtime.jar=probe=JavaVthreads::work into java_vthreads.trace.
import java.util.ArrayList;
import java.util.List;

public class JavaVthreads {
    static void work() throws InterruptedException { Thread.sleep(1); }

    public static void main(String[] args) throws Exception {
        List<Thread> ts = new ArrayList<>();
        for (int i = 0; i < 20; i++)
            ts.add(Thread.ofVirtual().start(() -> {
                try {
                    for (int k = 0; k < 10; k++) work();
                } catch (InterruptedException e) { throw new RuntimeException(e); }
            }));
        for (Thread t : ts) t.join();
    }
}
