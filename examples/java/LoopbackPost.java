import com.sun.net.httpserver.HttpServer;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.HttpURLConnection;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URL;
import java.nio.charset.StandardCharsets;

/**
 * docs/probes.md's example: POSTs to an HTTP server on the loopback
 * interface with java.net.HttpURLConnection, REQUESTS times, from one
 * thread; the server (the JDK's own) reads the body and answers "ok".
 *   java LoopbackPost.java [REQUESTS=200]
 */
public final class LoopbackPost {
    public static void main(String[] args) throws Exception {
        int requests = args.length > 0 ? Integer.parseInt(args[0]) : 200;
        HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/", exchange -> {
            try (InputStream in = exchange.getRequestBody()) {
                in.readAllBytes();
            }
            byte[] ok = "ok".getBytes(StandardCharsets.US_ASCII);
            exchange.sendResponseHeaders(200, ok.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(ok);
            }
        });
        server.start();
        URL url = new URL("http://127.0.0.1:" + server.getAddress().getPort() + "/orders");
        byte[] body = "{\"item\":42}".getBytes(StandardCharsets.US_ASCII);
        int okCount = 0;
        for (int i = 0; i < requests; i++) {
            HttpURLConnection c = (HttpURLConnection) url.openConnection();
            c.setRequestMethod("POST");
            c.setDoOutput(true);
            try (OutputStream out = c.getOutputStream()) {
                out.write(body);
            }
            okCount += c.getResponseCode() == 200 ? 1 : 0;
            try (InputStream in = c.getInputStream()) {
                in.readAllBytes();
            }
        }
        server.stop(0);
        System.out.println(okCount + " of " + requests + " requests answered 200");
    }
}
