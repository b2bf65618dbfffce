// Iceberg's REST catalog test server (org.apache.iceberg.rest.RESTCatalogServer, from
// iceberg-open-api's test fixtures), bound to 127.0.0.1 only: the fixture's own main binds every
// interface. Its backend catalog is built by the fixture from CATALOG_* variables (CATALOG_URI,
// CATALOG_WAREHOUSE, ...); Jetty listens on the port given as the first argument (0: any free one)
// and the port taken is printed as "listening on <port>". Run as `java -cp <jars> <this file> 0`.

import java.lang.reflect.Constructor;
import java.lang.reflect.Method;
import org.apache.iceberg.rest.RESTCatalogAdapter;
import org.apache.iceberg.rest.RESTCatalogServer;
import org.apache.iceberg.rest.RESTCatalogServlet;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.servlet.ServletContextHandler;
import org.eclipse.jetty.servlet.ServletHolder;

public class RestCatalogOnLoopback {
  public static void main(String[] args) throws Exception {
    // The fixture's backend and adapter are package-private: reached by reflection, used as they are.
    Constructor<RESTCatalogServer> server = RESTCatalogServer.class.getDeclaredConstructor();
    server.setAccessible(true);
    Method backend = RESTCatalogServer.class.getDeclaredMethod("initializeBackendCatalog");
    backend.setAccessible(true);
    Object context = backend.invoke(server.newInstance());
    Class<?> adapterClass = Class.forName("org.apache.iceberg.rest.RESTServerCatalogAdapter");
    Constructor<?> adapter = adapterClass.getDeclaredConstructor(context.getClass());
    adapter.setAccessible(true);
    RESTCatalogServlet servlet = new RESTCatalogServlet((RESTCatalogAdapter) adapter.newInstance(context));

    ServletContextHandler handler = new ServletContextHandler(ServletContextHandler.NO_SESSIONS);
    handler.addServlet(new ServletHolder(servlet), "/*");
    Server http = new Server();
    ServerConnector connector = new ServerConnector(http);
    connector.setHost("127.0.0.1");
    connector.setPort(Integer.parseInt(args[0]));
    http.addConnector(connector);
    http.setHandler(handler);
    http.start();
    System.out.println("listening on " + connector.getLocalPort());
    System.out.flush();
    http.join();
  }
}
