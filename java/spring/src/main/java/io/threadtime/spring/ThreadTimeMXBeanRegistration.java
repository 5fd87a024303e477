package io.threadtime.spring;

import io.threadtime.ThreadTimeMXBean;
import javax.management.ObjectName;
import org.springframework.beans.factory.DisposableBean;

/**
 * Keeps {@link ThreadTimeMXBean} registered with the platform MBean server
 * from its construction to the context's close.
 */
public final class ThreadTimeMXBeanRegistration implements DisposableBean {
    private final ObjectName name;

    ThreadTimeMXBeanRegistration() {
        this.name = ThreadTimeMXBean.registerMBean();
    }

    /** The name the bean is registered under. */
    public ObjectName getObjectName() {
        return name;
    }

    @Override
    public void destroy() {
        ThreadTimeMXBean.unregisterMBean();
    }
}
