// A real Apache Curator participant for Leasehold's ZooKeeper tests, built with javac from
// Debian's Curator jars (tests/support/curator.ts builds and starts it).
//
//   java CuratorHolder <connect> <mutex|latch|selector> <path> <participant id> <session timeout ms>
//
// Prints one line per step on stdout: "STARTED", then "HELD" (mutex, selector) or "LEADER"
// (latch) once it holds. A line "release" on stdin lets go (mutex release, latch close,
// selector returns from takeLeadership) and prints "RELEASED"; end of stdin before that exits
// at once, without letting go (as a crashed holder leaves its session to expire).
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CountDownLatch;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.leader.LeaderSelector;
import org.apache.curator.framework.recipes.leader.LeaderSelectorListenerAdapter;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.retry.RetryOneTime;

public final class CuratorHolder {
  private static void say(String line) {
    System.out.println(line);
    System.out.flush();
  }

  public static void main(String[] args) throws Exception {
    String connect = args[0], recipe = args[1], path = args[2], id = args[3];
    int sessionMs = Integer.parseInt(args[4]);
    CuratorFramework client = CuratorFrameworkFactory.builder().connectString(connect).sessionTimeoutMs(sessionMs)
        .connectionTimeoutMs(5000).retryPolicy(new RetryOneTime(200)).build();
    client.start();
    client.blockUntilConnected();
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    CountDownLatch release = new CountDownLatch(1);
    Thread reader = new Thread(() -> {
      try {
        for (String line; (line = in.readLine()) != null; ) if (line.trim().equals("release")) release.countDown();
      } catch (Exception ignored) {
      }
      // stdin closed before a release was asked: gone at once, as a crash leaves it.
      if (release.getCount() > 0) Runtime.getRuntime().halt(0);
    });
    reader.setDaemon(true);
    reader.start();
    say("STARTED");
    switch (recipe) {
      case "mutex": {
        InterProcessMutex mutex = new InterProcessMutex(client, path);
        mutex.acquire();
        say("HELD");
        release.await();
        mutex.release();
        break;
      }
      case "latch": {
        LeaderLatch latch = new LeaderLatch(client, path, id);
        latch.start();
        latch.await();
        say("LEADER");
        release.await();
        latch.close();
        break;
      }
      case "selector": {
        LeaderSelector selector = new LeaderSelector(client, path, new LeaderSelectorListenerAdapter() {
          @Override
          public void takeLeadership(CuratorFramework c) throws Exception {
            say("HELD");
            release.await();
          }
        });
        selector.setId(id);
        selector.start();
        release.await();
        Thread.sleep(200);
        selector.close();
        break;
      }
      default:
        throw new IllegalArgumentException("unknown recipe " + recipe);
    }
    say("RELEASED");
    Thread.sleep(100000000L);
  }
}
